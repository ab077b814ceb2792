#!/usr/bin/env bash
# 2026-12-06c call 10 (csrc 53f31ea, the session's last): on an H200, call9.sh (the H200's answers
# for builds 7 / 8 and the rule); on an H100, every test at the final kernels (the int8 GEMV's x
# load now goes through common/ldg.h's ld_cached_v4_if, the same instruction).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
if [[ "$gpu" == *H200* ]]; then exec bash benchmarks/results/h200/2026-12-06c/call9.sh "$1"; fi
echo "$gpu"
. benchmarks/call_setup.sh "$1"
timeout -k 10 ${TESTS_S:-230} $PY -m pytest -q -rf --tb=short --durations=5 --timeout=90 -p no:cacheprovider \
  -n 16 tests > "$R/tests_all.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_all.log"; grep -E "^FAILED" "$R/tests_all.log" | head -8
gzip -9 "$R/tests_all.log"; tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
