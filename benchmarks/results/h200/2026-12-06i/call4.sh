#!/usr/bin/env bash
# 2026-12-06i call 4 (H200): the sparse24 quick table.
set -uo pipefail; . benchmarks/call_setup.sh "$1"
timeout 200 $PY benchmarks/bench_sparse24.py --out $R/sp24 > $R/sp24.log 2>&1
tar czf $OUT/r.tgz -C $OUT r && rm -rf $R
