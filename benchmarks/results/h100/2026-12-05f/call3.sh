#!/usr/bin/env bash
# 2026-12-05f call 3: (a) fp8_block at M = 5..8 on mid-size layers: the ring kernel (auto) against
# the wgmma GEMV (TORCHQUANT_FP8_WGMMA_M5_MIN=1 lets auto take it from 1M weights), bf16 and fp16;
# the nvfp4 rule of call 1 made the analogous switch the other way, so this checks fp8's rule on
# the same shapes. (b) bench_e2e at M = 1 / 8 and bench_decode at M = 8 on the final kernels.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
. benchmarks/call_setup.sh "$1"
S=6144x4096,8192x4096,5120x5120,8192x8192,4096x4096,14336x4096,4096x14336,28672x4096,10240x8192
for dt in bf16 fp16; do
  PYTHONPATH=. timeout 120 $PY benchmarks/micro/env_ab.py --op fp8 --act-dtype $dt --path auto --shapes $S \
    --var TORCHQUANT_FP8_WGMMA_M5_MIN --values auto,1,auto,1 --ms 5,8 --out "$R/fp8_m5_$dt.csv" > "$R/fp8_m5_$dt.log" 2>&1
  echo "fp8 $dt rc=$? $(( $(date +%s) - t0 )) s"; grep fp8 "$R/fp8_m5_$dt.log"
done
timeout 150 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (int8|fp8_block|nvfp4)" | cut -c1-90
el=$(( $(date +%s) - t0 ))
[ $el -lt 400 ] && timeout $(( 540 - el )) $PY benchmarks/bench_decode.py --ms 8 --out "$R/decode" > "$R/decode.log" 2>&1
echo "decode rc=$? $(( $(date +%s) - t0 )) s"; grep -E "bf16|nvfp4|fp8_block" "$R/decode.log" | cut -c1-110 | head -30
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
