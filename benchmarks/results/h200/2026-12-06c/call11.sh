#!/usr/bin/env bash
# 2026-12-06c call 11 (not run this session: the device budget was spent; the next session's first
# call). On an H200: call9.sh (builds 7 / 8 and the rule on the H200), then the probe below. On
# either card: the probe's 32-row form (direct_gemv32: each x load feeds two m16 tiles, so half the
# x loads per weight byte; docs/nvfp4_gemv.md 33 found the x loads the SM side's cap) against the
# xr forms the extension runs (U=2xr = build 7, U=2xr/3 = build 8) and nox (no x loads at all),
# hot (24 MB in L2) and cold.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
OUT=${1:?}; mkdir -p "$OUT/p"; t0=$(date +%s)
if [[ "$gpu" == *H200* ]]; then
  TORCHQUANT_COMMIT=${TORCHQUANT_COMMIT:-unknown} bash benchmarks/results/h200/2026-12-06c/call9.sh "$OUT"
fi
PROBE_VARIANTS=U=2nox,U=2xr,U=2xr/3,R32U1/3,R32U1/2,R32U2/2 \
  bash benchmarks/micro/probe_hot_cold.sh "$OUT/p" 28672x8192 128256x4096 4096x14336 4096x4096
echo "elapsed $(( $(date +%s) - t0 )) s"
