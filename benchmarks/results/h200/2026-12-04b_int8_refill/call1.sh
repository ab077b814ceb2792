#!/usr/bin/env bash
# 2026-12-04b call 1: the int8 gemv's refill window (TORCHQUANT_INT8_GEMV_REFILL=1: each
# register slot reloaded as soon as it is consumed, in place of load-4 / consume-4 batches)
# A/B in one process on the decode shapes, M = 1..16, path gemv; the int8 CUDA tests with
# the knob unset and set; the pure-read floor (benchmarks/micro/read_floor.cu) of the large
# decode weights (int8 / fp8 28672x8192, nvfp4 28672x8192, 128256x4096 int8 / fp8).
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
(nvcc -O3 -arch=sm_90 -o "$R/read_floor" benchmarks/micro/read_floor.cu > "$R/nvcc.log" 2>&1; echo "rf nvcc rc=$?" >> "$R/nvcc.log") &
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu \
  timeout 300 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -i "spill\| error" "$R/build.log" | head -5
wait; cat "$R/nvcc.log"
ab() { local name=$1; shift; PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
ab refill --op int8 --path gemv --var TORCHQUANT_INT8_GEMV_REFILL --values auto,1,auto,1 \
  --shapes 28672x8192,128256x4096,57344x8192,8192x28672,14336x4096,4096x14336,4096x4096 --ms 1,4,8,16
echo "elapsed $(( $(date +%s) - t0 )) s"
timeout 150 "$R/read_floor" 234.881 242.221 132.121 525.337 541.753 > "$R/floor_large.txt" 2>&1
echo "read_floor rc=$?"; cat "$R/floor_large.txt" | grep -v "^ " | head -30
rm -f "$R/read_floor"
echo "elapsed $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_int8_cuda.py > "$R/tests_int8.log" 2>&1
echo "int8 tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_int8.log" | head -8; tail -n 1 "$R/tests_int8.log"
t1=$(date +%s)
TORCHQUANT_INT8_GEMV_REFILL=1 timeout -k 5 150 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_int8_cuda.py > "$R/tests_int8_refill.log" 2>&1
echo "int8 tests (refill) rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_int8_refill.log" | head -8; tail -n 1 "$R/tests_int8_refill.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
