#!/usr/bin/env bash
# 2026-12-06i call 3 (H200): the fp8 direct builds 1-3 forced, then 2026-12-05g's H200 driver.
set -uo pipefail; . benchmarks/call_setup.sh "$1"
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_DIRECT_BUILD --values 1,2,3,1,2,3 \
  --path direct --shapes 28672x8192,57344x8192 --ms 1,8 --out $R/builds123.csv > $R/builds123.log 2>&1
timeout 200 bash benchmarks/results/h200/2026-12-05g/call3.sh $OUT/c3
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
