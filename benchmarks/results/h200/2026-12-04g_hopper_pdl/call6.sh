#!/usr/bin/env bash
# 2026-12-04g call 6: after the test refactor (test_pdl_cuda's chain tests share one helper):
# full sm_90 build and the PDL tests of every format.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
timeout 250 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
timeout -k 5 100 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_pdl_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
