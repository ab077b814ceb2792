#!/usr/bin/env bash
# 2026-12-05g call 7 (ee0c9cc and later, csrc as ee0c9cc): every test on the GPU (pytest -n 16),
# after, on an H200 only, the timings of ../../h200/2026-12-05g/call3.sh (it stops at once on
# any other card). Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
t00=$(date +%s)
mkdir -p "$1/h200"
timeout 420 bash benchmarks/results/h200/2026-12-05g/call3.sh "$1/h200"
. benchmarks/call_setup.sh "$1"
left=$(( 585 - ($(date +%s) - t00) ))
timeout $left $PY -m pytest -q -p no:cacheprovider -n 16 tests > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t00 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -5
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
