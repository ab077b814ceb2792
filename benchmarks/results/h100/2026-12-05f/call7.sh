#!/usr/bin/env bash
# 2026-12-05f call 7 (the sanitizer call; a first try could not start a machine): compute-sanitizer over nvfp4's x-resident kernel
# with the 5..8-row tiles auto now takes (memcheck of benchmarks/micro/nvfp4_xres_memcheck.py,
# racecheck of its auto part), then, time allowing, the M = 5..8 rule's A/B (auto against
# TORCHQUANT_NVFP4_XRES=-1) on the shapes it takes and bench_e2e at M = 1 / 8.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
. benchmarks/call_setup.sh "$1"
PYTHONPATH=. timeout 130 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 $PY benchmarks/micro/nvfp4_xres_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 "$R/memcheck.log"
PYTHONPATH=. timeout 80 compute-sanitizer --tool racecheck --error-exitcode 9 --print-limit 20 $PY benchmarks/micro/nvfp4_xres_memcheck.py --auto-only > "$R/racecheck.log" 2>&1
echo "racecheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 "$R/racecheck.log"
el=$(( $(date +%s) - t0 ))
[ $el -lt 200 ] && PYTHONPATH=. timeout 50 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 1 --path auto \
  --shapes 6144x4096,8192x4096,8192x8192,5120x5120,4096x4096 --var TORCHQUANT_NVFP4_XRES --values auto,-1,auto,-1 \
  --ms 5,8 --out "$R/xres_rule.csv" > "$R/xres_rule.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep nvfp4 "$R/xres_rule.log"
el=$(( $(date +%s) - t0 ))
[ $el -lt 240 ] && timeout 70 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (int8|fp8_block|nvfp4)" | cut -c1-90
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
