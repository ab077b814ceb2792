#!/usr/bin/env bash
# 2026-12-06e call 4 (any card; on an H200 also 12-06d's call 11, the H200 A/B of the direct builds).
# The probe's x-in-registers form (direct_gemv_xreg: a persistent block splits K among its warps and
# each lane loads its pieces' x once, then streams 16-row tiles with no x loads) against the forms of
# builds 8 (U=2xr) and 12 (R64U1/1) and the incorrect no-x bound (U=2nox), hot (24 MB in L2) and
# cold (rotation past 8x L2), K = 4096 and 8192 layers, M = 1 / 2 / 4 / 8.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
OUT=${1:?}; mkdir -p "$OUT/p"; t0=$(date +%s)
P=.prebuilt/probe/nvfp4_direct_shape
export PROBE_VARIANTS=U=2xr/3,U=2nox,R64U1/1,XR16x2pf,XR16x2,XR8x4pf,XR8x4,XR16x2T2pf,XR16x4,XR16x4pf,XR32x2pf
for mb in 24 0; do
  PROBE_HOT_MB=$mb timeout 150 $P 28672x8192 28672x4096 14336x4096 4096x4096 > "$OUT/p/probe_hot$mb.log" 2>&1
  echo "probe hot=$mb MB rc=$? $(( $(date +%s) - t0 )) s"
done
for mb in 24 0; do
  echo "== hot $mb MB (0: cold)"; grep -E "==|M=1 |M=8 |WRONG" "$OUT/p/probe_hot$mb.log" | sed -E 's/  +/ /g; s/ err [^ ]*//' | cut -c1-90
done
if [[ "$gpu" == *H200* ]]; then
  TORCHQUANT_COMMIT=${TORCHQUANT_COMMIT:-unknown} bash benchmarks/results/h200/2026-12-06d/call11.sh "$OUT"
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
