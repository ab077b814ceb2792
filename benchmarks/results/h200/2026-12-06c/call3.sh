#!/usr/bin/env bash
# 2026-12-06c call 3 (probe at 681df67): call 2 (H100) found the direct GEMV's 28672x8192 grid at
# 36.9 us with its weight in L2 (3.59 TB/s) and 35.5 us with no decode at all: its SM / L2 side
# caps it above the H200's 34 us target. Is the cap per block (4 rounds of loads per warp at
# K = 8192, then the reduction and a 4.5-wave tail)? The same 132 MB in shapes whose blocks do
# half / 2x / 4x the work (57344x4096, 14336x16384, 7168x32768), hot (24 MB) and cold, with the
# persistent forms (p) and deeper loads. On an H200 the same, then call1.sh.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
OUT=${1:?}; mkdir -p "$OUT/p"; t0=$(date +%s)
P=.prebuilt/probe/nvfp4_direct_shape
export PROBE_VARIANTS=U=2,U=4,U=8,U=2p,U=4p,U=2skel,U=2pipe
for mb in 24 0; do
  PROBE_HOT_MB=$mb timeout 120 $P 57344x4096 28672x8192 14336x16384 7168x32768 > "$OUT/p/probe_hot$mb.log" 2>&1
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
