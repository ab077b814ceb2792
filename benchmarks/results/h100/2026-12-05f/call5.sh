#!/usr/bin/env bash
# 2026-12-05f call 5: the decode tables on an H100 (as results/h200/2026-12-05_tables on the H200):
# bench_<op>.py --full --ms 1,2,4,8,16 --forced-max-m 1 for nvfp4, fp8, int8: the anchors.md shapes
# plus Llama-3-8B / 70B shapes and the lm_head, every row checked against float64, bf16 cuBLAS in
# the same run. Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
. benchmarks/call_setup.sh "$1"
for op in nvfp4 fp8 int8; do
  el=$(( $(date +%s) - t0 )); left=$(( 560 - el ))
  [ $left -lt 60 ] && { echo "skip $op at $el s"; continue; }
  to=$(( left < 190 ? left : 190 ))
  timeout $to $PY benchmarks/bench_$op.py --full --ms 1,2,4,8,16 --forced-max-m 1 --out "$R/${op}_table" > "$R/$op.log" 2>&1
  echo "$op rc=$? $(( $(date +%s) - t0 )) s ($(grep -c ' ok' "$R/$op.log") rows ok, $(grep -ci 'fail' "$R/$op.log") fail lines)"
done
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
