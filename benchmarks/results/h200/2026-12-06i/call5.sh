#!/usr/bin/env bash
# 2026-12-06i call 5 (H200): sparse24 at 28672x8192, M = 1 / 8 / 16 / 2048, twice.
set -uo pipefail; . benchmarks/call_setup.sh "$1"
for i in 1 2; do
  timeout 120 $PY benchmarks/bench_sparse24.py --shapes 28672x8192 --ms 1,8,16,2048 --forced-max-m 0 --out $R/sp24_$i > $R/sp24_$i.log 2>&1
done
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
