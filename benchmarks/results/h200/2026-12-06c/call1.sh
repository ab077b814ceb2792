#!/usr/bin/env bash
# 2026-12-06c call 1 (csrc 9d5b55c): 12-06b call 9 (never ran: no H200) with every direct build (1..6) in
# the A/B, the deep ones (5 = U 6, 6 = U 3 issued early: 96 KB per SM) for the H200's large grids, and a
# per-test limit of 90 s so a slow test fails by name.
# On an H200, cheapest and most needed first (call 8 on an H100 took 12 s per bench_e2e and under
# 10 s per A/B): (1) DRAM bytes per SM clock as torch reads them (the narrow-card rules must be
# off); (2) bench_e2e twice, the fused layer on layout 3 (issue 7); (3) layout 1 / 3 under auto on
# the Llama-3 layers at M = 1 / 4 / 8; (4) the direct builds 1 / 3 / 4 / 5 on path direct, the same
# shapes (the long rows of 4096x14336 included); (5) the int8 / fp8 issue rows; (6) the load-depth
# probe (at most PROBE_S s); (7) every test (TESTS_S s, default 300). On an H100: (7) only.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
SH=4096x14336,28672x4096,14336x4096,6144x4096,4096x4096,28672x8192
if [[ "$gpu" == *H200* ]]; then
  $PY benchmarks/micro/device_caps.py 2>&1 | tee "$R/caps.log"
  for r in 1 2; do
    timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_$r" > "$R/e2e_$r.log" 2>&1
    echo "e2e $r rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_$r.log" | cut -c1-100
  done
  PYTHONPATH=. timeout 80 $PY benchmarks/micro/env_ab.py --op nvfp4 --path auto --shapes $SH \
    --var layout --values 1,3,1,3 --ms 1,4,8 --out "$R/layout13.csv" > "$R/layout13.log" 2>&1
  echo "layout13 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/layout13.log"
  PYTHONPATH=. timeout 120 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct --shapes $SH \
    --var TORCHQUANT_NVFP4_DIRECT --values 1,2,3,4,5,6,1,2,3,4,5,6 --ms 1,4,8 --out "$R/direct_u.csv" > "$R/direct_u.log" 2>&1
  echo "direct_u rc=$? $(( $(date +%s) - t0 )) s"; grep -E "nvfp4" "$R/direct_u.log"
  timeout 60 $PY benchmarks/bench_int8.py --shapes 28672x8192 --ms 1,16 --forced-max-m 1 --out "$R/int8" > "$R/int8.log" 2>&1
  echo "int8 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "tq |static|bf16 F.linear|_int_mm" "$R/int8.log" | cut -c1-100 | head -12
  timeout 80 $PY benchmarks/bench_fp8.py --full --shapes 28672x8192,128256x4096,4096x4096 --ms 1,8,16 \
    --forced-max-m 0 --out "$R/fp8_rows" > "$R/fp8.log" 2>&1
  echo "fp8 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "tq auto|static +[0-9]|bf16 F.linear" "$R/fp8.log" | cut -c1-100 | head -40
  timeout 80 $PY benchmarks/bench_nvfp4.py --full --shapes 28672x8192,128256x4096,4096x4096 --ms 1,8,16 \
    --forced-max-m 0 --out "$R/nvfp4_rows" > "$R/nvfp4.log" 2>&1
  echo "nvfp4 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "tq auto|static +[0-9]|bf16 F.linear" "$R/nvfp4.log" | cut -c1-100
  PROBE_VARIANTS=U=2,U=3/3,U=4,U=6,U=2pipe,U=3pipe \
    timeout ${PROBE_S:-60} .prebuilt/probe/nvfp4_direct_shape 28672x8192 4096x14336 > "$R/probe.log" 2>&1
  echo "probe rc=$? $(( $(date +%s) - t0 )) s"; grep -E "==|us" "$R/probe.log" | sed -E 's/  +/ /g' | cut -c1-90
fi
# -v and --durations name the slow tail (calls 9-10 of 12-06b, H100: 5999 passed, 0 failed, ~10
# tests unfinished after 200 s, unnamed by -q); --timeout fails a hung test with its stack
timeout -k 10 ${TESTS_S:-300} $PY -m pytest -v -rf --tb=short --durations=15 --timeout=90 -p no:cacheprovider \
  -n 16 tests > "$R/tests_all.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_all.log"; grep -E "^FAILED" "$R/tests_all.log" | head -8
grep -A16 "slowest durations" "$R/tests_all.log" | cut -c1-120
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
