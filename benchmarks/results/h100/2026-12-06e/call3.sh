#!/usr/bin/env bash
# 2026-12-06e call 3 (any card). The rotation depth for the other formats: int8_matmul, fp8_block_gemv
# and nvfp4_gemv on 28672x8192 and 4096x4096 at M = 1 / 16, copies at 3x L2 (the anchors' method) and
# 3x that (9x), two rounds (benchmarks/micro/rotation_depth.py --factor 3 --mults 1,3); then the quick
# int8 / fp8 / nvfp4 benchmarks and bench_e2e at the new default rotation (8x L2).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
. benchmarks/call_setup.sh "$1"
PYTHONPATH=. timeout 200 $PY benchmarks/micro/rotation_depth.py --cases int8,fp8,nvfp4,bf16 --shapes 28672x8192,4096x4096 \
  --factor 3 --mults 1,3 --ms 1,16 --out "$R/rotation3.csv" 2>&1 | tee "$R/rotation3.log"
echo "rotation rc=$? $(( $(date +%s) - t0 )) s"
for b in int8 fp8 nvfp4; do
  timeout 150 $PY benchmarks/bench_$b.py --quick --out "$R/$b" > "$R/$b.log" 2>&1
  echo "bench_$b rc=$? $(( $(date +%s) - t0 )) s"
  grep -E "^\[$b\] (read|[0-9])" "$R/$b.log" | grep -vE " fma | mma |layout1|n/a" | cut -c1-110
done
timeout 120 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (nvfp4|fp8_block|int8)  " | cut -c1-100
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
