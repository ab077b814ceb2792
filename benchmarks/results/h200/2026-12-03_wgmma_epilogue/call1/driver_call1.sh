#!/usr/bin/env bash
# Session 2026-12-03 call 1: where the int8 wgmma GEMM's time goes on the small-K expert
# shapes at M = 2048 (2048x768 loses to bf16): Nsight Compute of forced tiles and of cuBLAS bf16.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  $PY setup.py build_ext --inplace > "$R/build.log" 2>&1; echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
PYTHONPATH=. timeout 150 $PY benchmarks/micro/ncu_int8.py --shapes 2048x2048x768,2048x768x2048,512x2048x768 \
  --tiles 128x128c1,128x256c1,64x128c1 --bf16 --out "$R/ncu_sections.txt" > "$R/ncu_sections.log" 2>&1
echo "ncu sections rc=$? $(( $(date +%s) - t0 )) s"; cat "$R/ncu_sections.log" | head -150
t0=$(date +%s)
PYTHONPATH=. timeout 120 $PY benchmarks/micro/ncu_int8.py --shapes 2048x2048x768 --tiles 128x128c1 --bf16 --full \
  --out "$R/ncu_full.txt" > "$R/ncu_full.log" 2>&1
echo "ncu full rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op int8 --path wgmma --var TORCHQUANT_INT8_WGMMA_TILE \
  --values auto,128x128c1,128x256c1 --shapes 2048x768,768x2048 --ms 512,2048 --dense --out "$R/tiles.csv" > "$R/tiles.log" 2>&1
echo "tiles rc=$? $(( $(date +%s) - t0 )) s"; tail -n 6 "$R/tiles.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
