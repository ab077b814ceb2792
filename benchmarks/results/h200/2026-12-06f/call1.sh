#!/usr/bin/env bash
# 2026-12-06f call 1, H200 only (an H100 exits at once): the decode tables of every format at the
# 8x-L2 rotation (the last full tables, 2026-12-05_tables, used 3x and predate the direct nvfp4
# GEMV), bench_e2e, then the nvfp4 / nn tests on 4364850's rule, whose wide-card branch only an
# H200 takes. Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
[[ "$gpu" == *H200* ]] || { echo "not an H200: nothing to do"; exit 0; }
. benchmarks/call_setup.sh "$1"
for op in nvfp4 fp8 int8 sparse24; do
  timeout 110 $PY benchmarks/bench_$op.py --full --ms 1,2,4,8,16 --forced-max-m 1 --out "$R/${op}_table" \
    > "$R/${op}_table.log" 2>&1
  echo "$op rc=$? $(( $(date +%s) - t0 )) s"
done
timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (nvfp4|fp8_block|int8)( static)?  " | cut -c1-100
left=$(( 560 - ($(date +%s) - t0) )); [ $left -gt 30 ] || left=30
timeout $left $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_nvfp4_wgmma_cuda.py \
  tests/test_nn.py > "$R/tests_nvfp4.log" 2>&1
echo "tests rc=$? (limit $left s) $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_nvfp4.log"; grep -E "^FAILED" "$R/tests_nvfp4.log" | head -8
for op in nvfp4 fp8 int8; do grep -E "28672x8192 M=(1|8|16) +(tq auto|bf16 F.linear) " "$R/${op}_table.log" | cut -c1-90; done
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
