#!/usr/bin/env bash
# 2026-12-06i call 2 (H200): bench_e2e and the fp8 table with the fp8 direct rule off.
set -uo pipefail; . benchmarks/call_setup.sh "$1"; export TORCHQUANT_FP8_DIRECT=-1
timeout 90 $PY benchmarks/bench_e2e.py --ms 1,8 --out $R/e2e > $R/e2e.log 2>&1; echo "e2e rc=$?"
timeout 120 $PY benchmarks/bench_fp8.py --full --ms 1,2,4,8,16 --forced-max-m 1 --out $R/fp8_table > $R/fp8_table.log 2>&1; echo "table rc=$?"
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
