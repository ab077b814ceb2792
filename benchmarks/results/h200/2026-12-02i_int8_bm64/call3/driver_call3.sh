#!/usr/bin/env bash
# Session 2026-12-02i call 3: int8 wgmma tiles past M = 128 on the small shapes that still lose
# to bf16 at M = 256, and the K split of the 64 x 64 tile on the N = 1024 shapes.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  $PY setup.py build_ext --inplace > "$R/build.log" 2>&1; echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
PYTHONPATH=. timeout 200 $PY benchmarks/micro/env_ab.py --op int8 --path wgmma --var TORCHQUANT_INT8_WGMMA_TILE \
  --values auto,128x128c1,64x128c1,64x64c1 --shapes 2048x2048,768x2048,1536x2048,2048x768,1024x4096,1024x8192,4096x4096,6144x4096,14336x4096 \
  --ms 192,256,384,512 --dense --out "$R/i8tile_big.csv" > "$R/i8tile_big.log" 2>&1
echo "tile sweep rc=$? $(( $(date +%s) - t0 )) s"; grep "^int8 " "$R/i8tile_big.log"
t0=$(date +%s)
PYTHONPATH=. timeout 120 $PY benchmarks/micro/env_ab.py --op int8 --path wgmma --env TORCHQUANT_INT8_WGMMA_TILE=64x64c1 \
  --var TORCHQUANT_INT8_WGMMA_SPLITS --values auto,1,2,4,8 --shapes 1024x8192,1024x4096,768x2048,2048x2048 \
  --ms 64,128,256 --dense --out "$R/i8split.csv" > "$R/i8split.log" 2>&1
echo "split sweep rc=$? $(( $(date +%s) - t0 )) s"; grep "^int8 " "$R/i8split.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
