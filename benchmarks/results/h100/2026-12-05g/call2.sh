#!/usr/bin/env bash
# 2026-12-05g call 2 (7c00498, csrc as ee240ae): every test on the GPU (pytest -n 16); on an
# H200 also the timings that card owes since 8fc5977: nvfp4's M = 5..8 rule against the old one,
# bench_e2e at M = 1 / 8, and the issue rows at 28672x8192 / 128256x4096 / 4096x4096 of
# nvfp4 (layout 1), fp8_block and int8 beside bf16 cuBLAS.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
h200=0; case "$gpu" in *H200*) h200=1;; esac
if [ $h200 = 1 ]; then
  PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 1 --path auto \
    --shapes 6144x4096,8192x4096,8192x8192,5120x5120,4096x4096,28672x8192 --var TORCHQUANT_NVFP4_XRES --values auto,-1,auto,-1 \
    --ms 5,8 --out "$R/xres_rule.csv" > "$R/xres_rule.log" 2>&1
  echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep nvfp4 "$R/xres_rule.log"
  timeout 90 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
  echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (int8|fp8_block|nvfp4)" | cut -c1-100
  for op in nvfp4 fp8 int8; do
    timeout 70 $PY benchmarks/bench_$op.py --full --shapes 28672x8192,128256x4096,4096x4096 --ms 1,8,16 --forced-max-m 0 --out "$R/${op}_rows" > "$R/$op.log" 2>&1
    echo "$op rc=$? $(( $(date +%s) - t0 )) s"
  done
fi
el=$(( $(date +%s) - t0 )); left=$(( 575 - el ))
timeout $left $PY -m pytest -q -p no:cacheprovider -n 16 tests > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -5
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
