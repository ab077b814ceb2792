#!/usr/bin/env bash
# 2026-12-06c call 5 (probe with kXp): call 4 (H100) took the direct GEMV's L2-resident
# 28672x8192 M = 1 grid apart: 39.9 us whole, 39.4 without the decode, 30.6 without the decode and
# the x loads (4.31 TB/s), 30.3 with the weight loads alone. The x loads are the SM side's cap, and
# x through shared memory (xn) is no cheaper. Every lane loads 16 bytes of x per word, though only
# lanes g < M carry a real x row (the others feed D columns that are never stored): xp predicates
# them off (zeros). The load depths again with it, hot (24 MB) and cold. On an H200 the same, then
# call1.sh.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
OUT=${1:?}; mkdir -p "$OUT/p"; t0=$(date +%s)
P=.prebuilt/probe/nvfp4_direct_shape
export PROBE_VARIANTS=U=2,U=2nox,U=2xp,U=3/3xp,U=4xp,U=2pipexp,U=6xp,U=3pipexp
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
