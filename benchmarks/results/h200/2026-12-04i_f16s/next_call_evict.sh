#!/usr/bin/env bash
# Run 2026-12-05 (results: ../2026-12-05_layout/call2, call3). Was NOT RUN (written 2026-12-04i, no device time left): A/B of two builds, the streaming weight
# loads as they are (A) and with an evict-first L2 cache policy (B: -DTORCHQUANT_STREAM_L2_EVICT_FIRST
# set to 1 in common/ldg.h; createpolicy + .L2::cache_hint). The int8 GEMV streams every weight
# byte through these loads (28672x8192 M = 1 at 57.3-57.6 us against the 57); the nvfp4
# and fp8 kernels use them only off the ring. Registers with B (sm_90, ptxas): int8 GEMV 112 -> 114
# (deep loads), 72 -> 80 (2 loads in flight), 108 -> 110, 120 -> 118; no spills.
# Builds: ab_builds.sh takes A from .prebuilt/sm90 and B from .prebuilt/ab_B where they match
# (benchmarks/prebuilt.py; carry=[".prebuilt"]), else builds both (int8_matmul.cu only).
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
mkdir -p ab_old/csrc/common
sed 's/^#define TORCHQUANT_STREAM_L2_EVICT_FIRST 0$/#define TORCHQUANT_STREAM_L2_EVICT_FIRST 1/' csrc/common/ldg.h \
  > ab_old/csrc/common/ldg.h
grep -q "^#define TORCHQUANT_STREAM_L2_EVICT_FIRST 1$" ab_old/csrc/common/ldg.h || { echo "sed found nothing"; exit 1; }
AB_SOURCES=csrc/int8/int8_matmul.cu AB_ROUNDS=2 \
AB_CMDS="benchmarks/micro/env_ab.py --op int8 --path auto --var path --values=auto,auto --shapes 28672x8192,128256x4096,8192x28672,4096x4096,14336x4096 --ms 1,8,16 --out \$OUT/int8_{v}.csv;benchmarks/micro/pdl_ab.py --formats int8 --ms 1,8 --modes=auto,auto --out \$OUT/chain_{v}.csv" \
  bash benchmarks/micro/ab_builds.sh "$OUT"
