#!/usr/bin/env bash
# 2026-12-05h call 3 (csrc as a384a04). On an H200: the timings owed since 2026-12-05g
# (results/h200/2026-12-05g/call3.sh) and nothing else. On any other card: every test on the GPU
# (pytest -n 16), covering gemv_grid's split_rule change in the whole suite.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
case "$gpu" in *H200*) exec bash benchmarks/results/h200/2026-12-05g/call3.sh "$1";; esac
. benchmarks/call_setup.sh "$1"
el=$(( $(date +%s) - t0 )); left=$(( 575 - el ))
timeout $left $PY -m pytest -q -p no:cacheprovider -n 16 tests > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -5
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
