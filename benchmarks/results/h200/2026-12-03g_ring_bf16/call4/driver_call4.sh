#!/usr/bin/env bash
# Session 2026-12-03g call 4: int8_matmul.cu only, the 8-token gemv's deep loads (6 chunks in
# flight per lane) by rule (grids of <= 2 blocks per SM) and forced both ways
# (TORCHQUANT_INT8_GEMV_DEEP=1 / -1): the int8 CUDA tests, the knob on 8 layers at M = 1 / 4 / 8,
# the fused Llama-3-8B int8 layer chain with the rule and without.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu timeout 200 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout -k 5 90 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_int8_cuda.py > "$R/tests.log" 2>&1
echo "int8 tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op int8 --var TORCHQUANT_INT8_GEMV_DEEP --path auto --values auto,-1,1 \
  --shapes 4096x4096,1024x4096,6144x4096,4096x14336,8192x8192,14336x4096,28672x8192,128256x4096 --ms 1,4,8 --out "$R/deep.csv" > "$R/deep.log" 2>&1
echo "deep rc=$?"; grep "M=" "$R/deep.log"
PYTHONPATH=. timeout 40 $PY benchmarks/micro/pdl_ab.py --formats int8 --ms 1,8 --var TORCHQUANT_INT8_GEMV_DEEP --modes auto,-1,auto,-1 --out "$R/layer_int8.csv" > "$R/layer_int8.log" 2>&1
echo "layer rc=$?"; grep fused "$R/layer_int8.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
