#!/usr/bin/env bash
# Session 2026-12-03 call 1 (session 2026-12-03b): the int8 gemv with the weight through per-warp cp.async rings
# (TORCHQUANT_INT8_GEMV_RING=1, forced only) against the direct loads, same build; its tests and
# memcheck. int8_matmul.cu only. Results land in $OUT/r as they are made (no tarball: a run cut
# short by the device budget still returns what it has).
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu timeout 150 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout -k 5 40 $PY -m pytest -q --timeout=30 -p no:cacheprovider -n 16 tests/test_int8_cuda.py -k ring > "$R/tests_ring.log" 2>&1
echo "ring tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests_ring.log" | head -5; tail -n 1 "$R/tests_ring.log"
t0=$(date +%s)
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op int8 --path gemv --var TORCHQUANT_INT8_GEMV_RING \
  --values auto,1,auto,1 --shapes 28672x8192,128256x4096,4096x4096,14336x4096 \
  --ms 1,16,32 --out "$R/ring_ab.csv" > "$R/ring_ab.log" 2>&1
echo "ring ab rc=$? $(( $(date +%s) - t0 )) s"; grep "M=" "$R/ring_ab.log"
t0=$(date +%s)
timeout -k 5 50 compute-sanitizer --tool memcheck --error-exitcode 9 $PY -m pytest -q -p no:cacheprovider \
  tests/test_int8_cuda.py -k "ring and not 8256" > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? (9 = errors, 124 = time limit) $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|passed|failed" "$R/memcheck.log" | tail -2
t0=$(date +%s)
timeout -k 5 40 $PY -m pytest -q --timeout=30 -p no:cacheprovider -n 16 tests/test_int8_cuda.py > "$R/tests.log" 2>&1
echo "int8 tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -5; tail -n 1 "$R/tests.log"
