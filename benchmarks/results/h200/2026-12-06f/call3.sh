#!/usr/bin/env bash
# 2026-12-06f call 3, H200 only (an H100 exits at once): the fp8 direct rule (ca40025; two token tiles, 2c4bf35, at M = 9..16 by TORCHQUANT_FP8_DIRECT=1) against the ring /
# wgmma GEMVs; the decode tables of every format at the 8x-L2 rotation; bench_e2e; the fp8, nvfp4 and nn
# tests (the nvfp4 auto-rule test checks 4364850's wide-card branch, which only an H200 takes).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
[[ "$gpu" == *H200* ]] || { echo "not an H200: nothing to do"; exit 0; }
. benchmarks/call_setup.sh "$1"
PYTHONPATH=. timeout 80 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_DIRECT --values auto,-1,auto,-1 \
  --path auto --shapes 28672x8192,128256x4096,28672x4096 --ms 1,2,4,8 --out "$R/rule.csv" > "$R/rule.log" 2>&1
echo "rule rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|fp8" "$R/rule.log" | cut -c1-150
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op fp8 --var path --values auto,direct,auto,direct \
  --shapes 6144x4096,14336x4096,4096x4096 --ms 1,8 --out "$R/small.csv" > "$R/small.log" 2>&1
echo "small rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fp8" "$R/small.log" | cut -c1-150
PYTHONPATH=. timeout 70 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_DIRECT --values auto,1,auto,1 \
  --path auto --shapes 28672x8192,128256x4096,14336x4096,4096x4096 --ms 9,16 --out "$R/m16.csv" > "$R/m16.log" 2>&1
echo "m16 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fp8" "$R/m16.log" | cut -c1-150
for op in nvfp4 fp8 int8 sparse24; do
  timeout 110 $PY benchmarks/bench_$op.py --full --ms 1,2,4,8,16 --forced-max-m 1 --out "$R/${op}_table" \
    > "$R/${op}_table.log" 2>&1
  echo "$op rc=$? $(( $(date +%s) - t0 )) s"
done
timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (nvfp4|fp8_block|int8)( static)?  " | cut -c1-100
left=$(( 560 - ($(date +%s) - t0) )); [ $left -gt 30 ] || left=30
timeout $left $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_nvfp4_cuda.py \
  tests/test_nvfp4_wgmma_cuda.py tests/test_nn.py > "$R/tests.log" 2>&1
echo "tests rc=$? (limit $left s) $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -8
for op in nvfp4 fp8 int8; do grep -E "(28672x8192|128256x4096|4096x4096) M=(1|8|16) +(tq auto|tq auto layout3|tq auto static|bf16 F.linear) " "$R/${op}_table.log" | cut -c1-90; done
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
