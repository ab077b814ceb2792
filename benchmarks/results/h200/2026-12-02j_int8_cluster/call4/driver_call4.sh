#!/usr/bin/env bash
# Session 2026-12-02j call 4: int8 gemv with 128-byte chunks (A/B against 64) and tests.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  $PY setup.py build_ext --inplace > "$R/build.log" 2>&1; echo "build rc=$? $(( $(date +%s) - t0 )) s"
grep -E "error" "$R/build.log" | head -5
t0=$(date +%s)
timeout -k 10 200 $PY -m pytest -q --timeout=150 -p no:cacheprovider -n 16 tests/test_int8_cuda.py \
  > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -20; tail -n 2 "$R/tests.log"
t0=$(date +%s)
timeout -k 10 100 compute-sanitizer --tool memcheck --error-exitcode 9 $PY -m pytest -q -p no:cacheprovider \
  tests/test_int8_cuda.py -k "chunk_widths" > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? (9 = errors, 124 = time limit) $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|passed|failed" "$R/memcheck.log" | tail -3
t0=$(date +%s)
PYTHONPATH=. timeout 240 $PY benchmarks/micro/env_ab.py --op int8 --path gemv --var TORCHQUANT_INT8_GEMV_CHUNK \
  --values auto,64,128,64,128 --shapes 28672x8192,128256x4096,14336x4096,4096x14336,4096x4096,6144x4096,1024x4096 \
  --ms 1,2,4,8,16 --dense --out "$R/chunk_ab.csv" > "$R/chunk_ab.log" 2>&1
echo "chunk ab rc=$? $(( $(date +%s) - t0 )) s"; tail -c 6000 "$R/chunk_ab.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
