#!/usr/bin/env bash
# 2026-12-06c call 2 (csrc 9d5b55c; probe with PROBE_HOT_MB): what the direct GEMV's SM side can
# stream when DRAM is out of the way. The probe (.prebuilt/probe, built from
# benchmarks/micro/nvfp4_direct_shape.cu at this commit) runs each shape's full grid twice: cold
# (operands rotated past 3x L2, as every table) and hot (PROBE_HOT_MB: every block reads one of
# the first tiles that fit in that many MB, so the same byte count comes from L2). The "skel"
# forms drop the decode and scale multiply (loads, x and mma only). SMs and clocks are the same
# on the H100 and the H200, so the hot rate bounds what the H200 (4.39 TB/s; the 88 % is
# 3.86 TB/s, 34 us on 28672x8192) can get from each form. On an H200 call1.sh runs first.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
OUT=${1:?}; mkdir -p "$OUT/p"; t0=$(date +%s)
if [[ "$gpu" == *H200* ]]; then
  TORCHQUANT_COMMIT=${TORCHQUANT_COMMIT:-unknown} PROBE_S=60 TESTS_S=${TESTS_S:-150} \
    bash benchmarks/results/h200/2026-12-06c/call1.sh "$OUT"
fi
P=.prebuilt/probe/nvfp4_direct_shape
export PROBE_VARIANTS=U=2,U=3/3,U=6,U=2pipe,U=3pipe,U=2skel,U=3pipeskel
for mb in 0 24 8; do
  PROBE_HOT_MB=$mb timeout 100 $P 28672x8192 4096x14336 4096x4096 > "$OUT/p/probe_hot$mb.log" 2>&1
  echo "probe hot=$mb MB rc=$? $(( $(date +%s) - t0 )) s"
done
for mb in 0 24 8; do
  echo "== hot $mb MB (0: cold)"; grep -E "==|us" "$OUT/p/probe_hot$mb.log" | sed -E 's/  +/ /g' | cut -c1-100
done
echo "elapsed $(( $(date +%s) - t0 )) s"
