#!/usr/bin/env bash
# 2026-12-05e call 1: asks for an H200. On an H200 it runs 2026-12-05b's call1.sh (the static-weight
# rows of bench_e2e that decide issue 7's 2.5x at M = 1, the int8 op line of issue 3, the PDL /
# nvfp4 / module / capability-report tests). On any other card it runs only the capability
# report's tests (its kernel probe has never run on a GPU) and stops, to spend little device time.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
if [[ "$gpu" == *H200* ]]; then
  exec bash benchmarks/results/h200/2026-12-05b_pdl/call1.sh "$1"
fi
. benchmarks/call_setup.sh "$1"
timeout 200 $PY -m pytest -q -p no:cacheprovider tests/test_seed_claims.py > "$R/tests_report.log" 2>&1
echo "report tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_report.log"; grep -E "^FAILED|Error" "$R/tests_report.log" | head -10
timeout 120 $PY -m torchquant report --size 256 --no-ladder --no-real > "$R/report.txt" 2>&1; echo "report rc=$?"; cat "$R/report.txt" | head -40
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
