#!/usr/bin/env bash
# Session 2026-12-03b call 4: the int8 wgmma tile rule with 64 x 128 tiles for every one-M-tile
# grid (M <= 64), then gemv vs wgmma at M = 17 / 32 on the 17 sweep shapes, the new tile against
# the old 128-row choice at M = 48 / 64 on the shapes it changes, and the int8 tests.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu timeout 200 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
SH=4096x4096,1024x4096,6144x4096,14336x4096,28672x4096,4096x14336,8192x8192,1024x8192,10240x8192,28672x8192,57344x8192,8192x28672,768x2048,1536x2048,2048x768,128256x4096,2048x2048
t0=$(date +%s)
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op int8 --var path --values gemv,wgmma,gemv,wgmma \
  --shapes $SH --ms 17,32 --dense --out "$R/path_m17_32.csv" > "$R/path_m17_32.log" 2>&1
echo "path ab rc=$? $(( $(date +%s) - t0 )) s"; grep "M=" "$R/path_m17_32.log"
t0=$(date +%s)
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op int8 --path wgmma --var TORCHQUANT_INT8_WGMMA_TILE \
  --values auto,128x128c1,auto,128x128c1 --shapes 28672x8192,28672x4096,57344x8192,128256x4096 --ms 48,64 \
  --out "$R/tile_m48_64.csv" > "$R/tile_m48_64.log" 2>&1
echo "tile ab rc=$? $(( $(date +%s) - t0 )) s"; grep "M=" "$R/tile_m48_64.log"
t0=$(date +%s)
timeout -k 5 90 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_int8_wgmma_cuda.py tests/test_int8_cuda.py > "$R/tests.log" 2>&1
echo "int8 tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -5; tail -n 1 "$R/tests.log"
