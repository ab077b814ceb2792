#!/usr/bin/env bash
# 2026-12-03h call 6: the narrow x-through-the-ring rule limited to M <= 4 (call 5: the layer
# chain won at M = 1 and lost at M = 8): the op alone and the layer chain at M = 1..4, auto
# against -1 (off), bf16; then the ring tests.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu timeout 150 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
PYTHONPATH=. timeout 40 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_XRING --path auto --values auto,-1,auto,-1 \
  --shapes 2048x4096,4096x4096,4096x8192 --ms 2,3,4,8 --out "$R/xr.csv" > "$R/xr.log" 2>&1
echo "xr rc=$?"; grep "M=" "$R/xr.log"
PYTHONPATH=. timeout 50 $PY benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,2,4,8 --var TORCHQUANT_FP8_XRING --modes auto,-1,auto,-1 --out "$R/layer.csv" > "$R/layer.log" 2>&1
echo "layer rc=$?"; grep fused "$R/layer.log"
timeout -k 5 40 $PY -m pytest -q --timeout=30 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py -k "x_through_ring or auto" > "$R/tests.log" 2>&1
echo "tests rc=$?"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -6; tail -n 1 "$R/tests.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
