#!/usr/bin/env bash
# Session 2026-12-03g call 5: int8_matmul.cu only, compute-sanitizer memcheck of the int8 gemv
# with the deep loads forced on and off (benchmarks/micro/int8_gemv_memcheck.py).
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu timeout 150 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
PYTHONPATH=. timeout 90 compute-sanitizer --tool memcheck --print-limit 20 $PY benchmarks/micro/int8_gemv_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; tail -n 3 "$R/memcheck.log"
(cd "$OUT" && gzip -9 r/build.log && tar czf r.tgz r && rm -rf r)
