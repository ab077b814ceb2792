#!/usr/bin/env bash
# 2026-12-06c call 4 (probe with kSkel 2 / 3 and kXn): calls 2-3 (H100) put the direct GEMV's
# L2-resident ceiling at 3.3-3.7 TB/s on 132 MB grids of every block size, decode or not. What is
# left in "skel" is the weight loads, the x loads (L1-cached, 4 per 64-byte piece: at bf16 x and
# 128 codes per piece, 4x the int8 GEMV's x bytes per weight byte) and the mma. Take them out one
# at a time: nox (no x loads), ld (weight loads only, no mma), xn (x staged in shared memory,
# natural order, 16-byte LDS). Hot (24 MB) and cold. On an H200 the same, then call1.sh.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
OUT=${1:?}; mkdir -p "$OUT/p"; t0=$(date +%s)
P=.prebuilt/probe/nvfp4_direct_shape
export PROBE_VARIANTS=U=2,U=2skel,U=2nox,U=2ld,U=4ld,U=2xn,U=4xn
for mb in 24 0; do
  PROBE_HOT_MB=$mb timeout 120 $P 28672x8192 57344x4096 4096x4096 > "$OUT/p/probe_hot$mb.log" 2>&1
  echo "probe hot=$mb MB rc=$? $(( $(date +%s) - t0 )) s"
done
for mb in 24 0; do
  echo "== hot $mb MB (0: cold)"; grep -E "==|M=1 |M=4 " "$OUT/p/probe_hot$mb.log" | sed -E 's/  +/ /g; s/ err.*//' | cut -c1-90
done
if [[ "$gpu" == *H200* ]]; then
  TORCHQUANT_COMMIT=${TORCHQUANT_COMMIT:-unknown} PROBE_S=40 TESTS_S=${TESTS_S:-120} \
    bash benchmarks/results/h200/2026-12-06c/call1.sh "$OUT"
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
