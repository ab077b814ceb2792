#!/usr/bin/env bash
# 2026-12-05g call 3 (7c00498; csrc as ee240ae): the H200 timings owed since 8fc5977, only on an
# H200 (on any other card it stops at once): nvfp4's M = 5..8 rule against the old one
# (TORCHQUANT_NVFP4_XRES=-1), bench_e2e at M = 1 / 8, and the issue rows at 28672x8192 /
# 128256x4096 / 4096x4096 of nvfp4, fp8_block and int8 at M = 1 / 8 / 16 beside bf16 cuBLAS; and
# (since call 6) the bf16 2:4 small-grid rule: auto beside every forced path at M = 1..3.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
case "$gpu" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0;; esac
. benchmarks/call_setup.sh "$1"
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 1 --path auto \
  --shapes 6144x4096,8192x4096,8192x8192,5120x5120,4096x4096,28672x8192 --var TORCHQUANT_NVFP4_XRES --values auto,-1,auto,-1 \
  --ms 5,8 --out "$R/xres_rule.csv" > "$R/xres_rule.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep nvfp4 "$R/xres_rule.log"
timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (int8|fp8_block|nvfp4)" | cut -c1-100
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op sparse24 --var path --values auto,fma,wgmma,mma,auto \
  --shapes 4096x4096,1024x4096,2048x2048,1536x2048,4096x14336,1024x8192 --ms 1,2,3 --out "$R/sp24_paths.csv" > "$R/sp24_paths.log" 2>&1
echo "sp24 rc=$? $(( $(date +%s) - t0 )) s"; grep sparse24 "$R/sp24_paths.log"
for op in nvfp4 fp8 int8; do
  el=$(( $(date +%s) - t0 )); left=$(( 570 - el )); [ $left -lt 40 ] && break
  to=$(( left < 110 ? left : 110 ))
  timeout $to $PY benchmarks/bench_$op.py --full --shapes 28672x8192,128256x4096,4096x4096 --ms 1,8,16 --forced-max-m 0 --out "$R/${op}_rows" > "$R/$op.log" 2>&1
  echo "$op rc=$? $(( $(date +%s) - t0 )) s"; grep -E "tq auto|static +[0-9]|bf16 F.linear" "$R/$op.log" | cut -c1-110 | head -40
done
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
