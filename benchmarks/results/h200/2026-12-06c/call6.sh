#!/usr/bin/env bash
# 2026-12-06c call 6 (probe with kXr): call 5 (H100) found predicating the x loads to the real x
# rows (xp) worth only 1-3 %: not the bytes but the loads themselves (4 per piece, each before
# its mma). xr loads the round's x with its weight in issue(), so their latency overlaps.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
OUT=${1:?}; mkdir -p "$OUT/p"; t0=$(date +%s)
P=.prebuilt/probe/nvfp4_direct_shape
export PROBE_VARIANTS=U=2,U=2nox,U=2xp,U=1xr,U=2xr,U=2xr/3,U=3xr
for mb in 24 0; do
  PROBE_HOT_MB=$mb timeout 150 $P 28672x8192 128256x4096 4096x14336 4096x4096 > "$OUT/p/probe_hot$mb.log" 2>&1
  echo "probe hot=$mb MB rc=$? $(( $(date +%s) - t0 )) s"
done
for mb in 24 0; do
  echo "== hot $mb MB (0: cold)"; grep -E "==|M=1 |M=8 " "$OUT/p/probe_hot$mb.log" | sed -E 's/  +/ /g; s/ err [^ ]*//' | cut -c1-90
done
if [[ "$gpu" == *H200* ]]; then
  TORCHQUANT_COMMIT=${TORCHQUANT_COMMIT:-unknown} PROBE_S=40 TESTS_S=${TESTS_S:-120} \
    bash benchmarks/results/h200/2026-12-06c/call1.sh "$OUT"
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
