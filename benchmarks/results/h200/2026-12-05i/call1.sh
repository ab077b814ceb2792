#!/usr/bin/env bash
# 2026-12-05i call 1 (7a1322c): on an H200, first the timings owed since 2026-12-05g (issue rows of
# nvfp4 / fp8_block / int8 beside bf16 cuBLAS, bench_e2e at M = 1 / 8) and the nvfp4 layout 1 / 3
# A/B (auto: mma / wgmma GEMVs against the direct GEMV); on any card the GPU validation owed since
# 2026-12-05h: compute-sanitizer memcheck of the direct GEMV, then every test.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
timeout 60 compute-sanitizer --tool memcheck --print-limit 10 env PYTHONPATH=. $PY benchmarks/micro/nvfp4_direct_memcheck.py > "$R/memcheck_direct.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 "$R/memcheck_direct.log"
case "$gpu" in *H200*)
PYTHONPATH=. timeout 80 $PY benchmarks/micro/env_ab.py --op nvfp4 --path auto --var layout --values 1,3,1,3 \
  --shapes 28672x8192,128256x4096,14336x4096,4096x4096,6144x4096,4096x14336 --ms 1,2,4,8 --out "$R/layout13.csv" > "$R/layout13.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/layout13.log"
timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (int8|fp8_block|nvfp4)" | cut -c1-100
for op in nvfp4 fp8 int8; do
  timeout 100 $PY benchmarks/bench_$op.py --full --shapes 28672x8192,128256x4096,4096x4096 --ms 1,8,16 --forced-max-m 0 --out "$R/${op}_rows" > "$R/$op.log" 2>&1
  echo "$op rc=$? $(( $(date +%s) - t0 )) s"; grep -E "tq auto|static +[0-9]|bf16 F.linear" "$R/$op.log" | cut -c1-110 | head -40
done ;;
esac
el=$(( $(date +%s) - t0 )); left=$(( 570 - el ))
timeout $left $PY -m pytest -q -p no:cacheprovider -n 16 tests > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -8
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
