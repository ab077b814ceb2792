#!/usr/bin/env bash
# 2026-12-04c call 5: the int8 gemv with each output's epilogue operands (per-channel scale,
# per-token scale, zero point x column sum, bias) loaded before the K loop, so no block ends on a
# DRAM round trip for its scales (TORCHQUANT_INT8_GEMV_EPI auto = early / -1 = after the loop),
# A/B in one process with bf16 cuBLAS beside it; the int8 CUDA tests; compute-sanitizer memcheck
# of the gemv launches (both forms). Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu \
  timeout 300 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -i "spill\| error" "$R/build.log" | head -5
ab() { local name=$1; shift; PYTHONPATH=. timeout 240 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
ab epi --op int8 --path gemv --var TORCHQUANT_INT8_GEMV_EPI --values auto,-1,auto,-1 --dense \
  --shapes 28672x8192,8192x28672,128256x4096,14336x4096,6144x4096,4096x4096 --ms 1,4,8,16
echo "elapsed $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
timeout -k 5 200 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_int8_cuda.py > "$R/tests_int8.log" 2>&1
echo "int8 tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_int8.log" | head -8; tail -n 1 "$R/tests_int8.log"
t1=$(date +%s)
PYTHONPATH=. timeout 200 compute-sanitizer --tool memcheck $PY benchmarks/micro/int8_gemv_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t1 )) s"; tail -n 3 "$R/memcheck.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
