#!/usr/bin/env bash
# 2026-12-03i call 3: the driver prepared in session 2026-12-03h (next_not_run.sh there), plus the nvfp4 CUDA tests.
# The two rules that landed here (fp8 x through the ring at M <= 2 on K-split-8 layers; int8
# deep loads at >= 16 chunks per warp) were measured per op and in pdl_ab's layer chain, not in
# bench_e2e, and the full test suite has not run on one build holding both. This does that:
# full sm_90 build, the CUDA tests of every format, bench_e2e at M = 1 / 2 / 8, and the fp8
# decode table (fp16 and bf16) beside cuBLAS.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
timeout 330 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
timeout -k 5 230 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_int8_cuda.py \
  tests/test_pdl_cuda.py tests/test_nn.py tests/test_nvfp4_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
PYTHONPATH=. timeout 160 $PY benchmarks/bench_e2e.py --ms 1,2,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$?"; tail -n 30 "$R/e2e.log"
SH=4096x4096,6144x4096,14336x4096,28672x4096,4096x14336,8192x8192,28672x8192,128256x4096
for dt in fp16 bf16; do
  PYTHONPATH=. timeout 70 $PY benchmarks/micro/env_ab.py --op fp8 --act-dtype $dt --var path --values auto \
    --shapes $SH --ms 1,2,4,8,16 --dense --out "$R/fp8_$dt.csv" > "$R/fp8_$dt.log" 2>&1
  echo "fp8 $dt rc=$?"; grep "M=" "$R/fp8_$dt.log"
done
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
