#!/usr/bin/env bash
# Session 2026-12-03 call 2: int8 wgmma GEMM, regrouped 16-byte epilogue stores (knob
# TORCHQUANT_INT8_WGMMA_VEC, on by default in this build) and the new 128x128c2 tile (forced):
# same-build A/B, int8 wgmma tests, memcheck of the new tests.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  $PY setup.py build_ext --inplace > "$R/build.log" 2>&1; echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
PYTHONPATH=. timeout 100 $PY benchmarks/micro/env_ab.py --op int8 --path wgmma --var TORCHQUANT_INT8_WGMMA_VEC \
  --values auto,0,auto,0 --shapes 2048x768,768x2048,1536x2048,2048x2048,4096x4096,28672x8192 \
  --ms 64,512,2048 --dense --out "$R/vec_ab.csv" > "$R/vec_ab.log" 2>&1
echo "vec ab rc=$? $(( $(date +%s) - t0 )) s"; tail -n 19 "$R/vec_ab.log"
t0=$(date +%s)
PYTHONPATH=. timeout 100 $PY benchmarks/micro/env_ab.py --op int8 --path wgmma --var TORCHQUANT_INT8_WGMMA_TILE \
  --values auto,128x128c1,128x128c2,128x256c2 --shapes 2048x768,768x2048,1536x2048,2048x2048,2048x4096,4096x4096 \
  --ms 512,1024,2048 --dense --out "$R/tiles_ab.csv" > "$R/tiles_ab.log" 2>&1
echo "tiles ab rc=$? $(( $(date +%s) - t0 )) s"; tail -n 19 "$R/tiles_ab.log"
t0=$(date +%s)
timeout -k 10 200 $PY -m pytest -q --timeout=150 -p no:cacheprovider -n 16 tests/test_int8_wgmma_cuda.py tests/test_int8_cuda.py \
  > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -20; tail -n 2 "$R/tests.log"
t0=$(date +%s)
timeout -k 10 120 compute-sanitizer --tool memcheck --error-exitcode 9 $PY -m pytest -q -p no:cacheprovider \
  tests/test_int8_wgmma_cuda.py -k "vec_store_knob or (forced_tile_configs and 128x128c2)" > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? (9 = errors, 124 = time limit) $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|passed|failed" "$R/memcheck.log" | tail -3
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
