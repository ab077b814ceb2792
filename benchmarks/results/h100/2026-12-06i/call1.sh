#!/usr/bin/env bash
# 2026-12-06i, either card. On an H200: ../../h200/2026-12-06h/call1.sh (the fp8 direct GEMV's
# H200 timings, bench_e2e, tests; CAP 540). On an H100: compute-sanitizer over the fp8 direct GEMV,
# never run under it before: memcheck of benchmarks/micro/fp8_direct_memcheck.py, one process per
# build (1..5) side by side, then racecheck (the 8 warps' shared-memory reduction) for builds 3
# and 4 (the defaults at M <= 8 / M > 8); beside the memchecks, tests/test_fuzz_args.py's CUDA half
# (every op's arguments mutated one way at a time) under memcheck; then the fp8 tests until CAP.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
if [[ "$gpu" == *H200* ]]; then exec bash benchmarks/results/h200/2026-12-06h/call1.sh "$1" "${2:-540}"; fi
CAP=${2:-540}
. benchmarks/call_setup.sh "$1"
for b in 1 2 3 4 5; do
  PYTHONPATH=. timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 \
    $PY benchmarks/micro/fp8_direct_memcheck.py $b > "$R/memcheck_b$b.log" 2>&1 &
done
PYTHONPATH=. timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 \
  $PY -m pytest -q -p no:cacheprovider tests/test_fuzz_args.py -k cuda > "$R/memcheck_fuzz.log" 2>&1 &
wait
echo "memcheck fuzz: $(grep -E "passed|failed|ERROR SUMMARY" "$R/memcheck_fuzz.log" | tr '\n' ' ')"
for b in 1 2 3 4 5; do echo "memcheck build $b: $(tail -n 2 "$R/memcheck_b$b.log" | tr '\n' ' ')"; done
echo "$(( $(date +%s) - t0 )) s"
for b in 3 4; do
  PYTHONPATH=. timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 --print-limit 20 \
    $PY benchmarks/micro/fp8_direct_memcheck.py $b > "$R/racecheck_b$b.log" 2>&1 &
done
wait
for b in 3 4; do echo "racecheck build $b: $(tail -n 2 "$R/racecheck_b$b.log" | tr '\n' ' ')"; done
left=$(( CAP - ($(date +%s) - t0) )); [ $left -gt 20 ] || left=20
timeout $left $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests_fp8.log" 2>&1
echo "fp8 tests rc=$? (limit $left s) $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_fp8.log"; grep -E "^FAILED" "$R/tests_fp8.log" | head -8
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
