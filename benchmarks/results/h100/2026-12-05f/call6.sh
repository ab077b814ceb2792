#!/usr/bin/env bash
# 2026-12-05f call 6: compute-sanitizer over nvfp4's x-resident kernel with the tiles of 5..8 rows
# that auto now takes at M = 5..8 (benchmarks/micro/nvfp4_xres_memcheck.py: forced at every KS,
# split or not, M = 1..8; then auto on a one-wave grid in layouts 0 / 1 / 2): memcheck of all of
# it, racecheck of the auto part. Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
. benchmarks/call_setup.sh "$1"
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 $PY benchmarks/micro/nvfp4_xres_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 "$R/memcheck.log"
timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 --print-limit 20 $PY benchmarks/micro/nvfp4_xres_memcheck.py --auto-only > "$R/racecheck.log" 2>&1
echo "racecheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 "$R/racecheck.log"
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
