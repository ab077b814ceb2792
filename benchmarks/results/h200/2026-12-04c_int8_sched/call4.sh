#!/usr/bin/env bash
# 2026-12-04c call 4: the rule for the 16-token tile's 2 loads in flight (M >= 12, long unsplit rows,
# >= 12 blocks per SM): M = 10..16 over grids of 512 .. 8016 blocks, auto / forced 2 / forced 4
# in one process; the int8 CUDA tests. Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu \
  timeout 300 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -i "spill\| error" "$R/build.log" | head -5
ab() { local name=$1; shift; PYTHONPATH=. timeout 200 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
ab loads16_sweep --op int8 --path gemv --var TORCHQUANT_INT8_GEMV_LOADS16 --values auto,2,4,auto,2,4 \
  --shapes 28672x8192,57344x8192,16384x8192,128256x8192,8192x28672 --ms 10,12,14,16
echo "elapsed $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
timeout -k 5 200 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_int8_cuda.py > "$R/tests_int8.log" 2>&1
echo "int8 tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_int8.log" | head -8; tail -n 1 "$R/tests_int8.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
