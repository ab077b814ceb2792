#!/usr/bin/env bash
# 2026-12-07g call 6, either card: layout 4 (layout 3 tiled, weight and scales per 16-row tile and
# 64-byte piece: csrc/nvfp4/nvfp4_tiles.h, docs/nvfp4_gemv.md 40) in the extension. First its GPU
# tests (the tiled builds' bits against layout 3's, the float64 bound, the picks and refusals,
# relayout on CUDA) with the direct GEMV's existing tests; then the A/B, nvfp4_gemv on path auto
# with layout 3 (what QuantLinear runs for bf16 today: the direct GEMV by direct_rule, else the
# ring / wgmma GEMVs) against layout 4 (the direct GEMV at every M), cold L2, graph replay, bf16
# cuBLAS in the same run; then path direct on both (the same builds: the tiling's own effect).
# On an H200 the rest of call1.sh (the owed checks) follows in what is left of CAP.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
CAP=${2:-480}
. benchmarks/call_setup.sh "$1"
timeout 120 $PY -m pytest -q -rs -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_nvfp4_layout.py \
  -k "tiled or direct_auto_rule or direct_layout3 or load_depth or relayout or layout_errors" > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -8
SH=28672x8192,128256x4096,4096x4096,14336x4096,4096x14336,28672x4096
timeout 150 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op nvfp4 --var layout --values 3,4,3,4 --path auto \
  --dense --shapes $SH --ms 1,2,4,8,16 --out "$R/tiled_auto.csv" > "$R/tiled_auto.log" 2>&1
echo "tiled_auto rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^nvfp4|ceiling" "$R/tiled_auto.log"
timeout 90 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op nvfp4 --var layout --values 3,4,3,4 --path direct \
  --shapes $SH --ms 1,4,8,16 --out "$R/tiled_direct.csv" > "$R/tiled_direct.log" 2>&1
echo "tiled_direct rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^nvfp4" "$R/tiled_direct.log"
tar czf "$OUT/t.tgz" -C "$OUT" r && rm -rf "$R"
left=$(( CAP - ($(date +%s) - t0) ))
if [[ "$gpu" == *H200* && $left -gt 120 ]]; then bash benchmarks/results/h200/2026-12-07/call1.sh "$OUT" $left; fi
echo "elapsed $(( $(date +%s) - t0 )) s"
