#!/usr/bin/env bash
# 2026-12-06h, H200 only (an H100 exits at once; call 1 of this folder, an earlier form of this
# driver, ran tests/test_fp8_cuda.py on an H100: results/h100/2026-12-06h/call1). Steps by priority,
# each writing plain logs under $OUT/r so a run cut at the call's limit still returns them:
# (1) the fp8 direct rule: auto against TORCHQUANT_FP8_DIRECT=-1 at M = 1..8 on the large layers;
# (2) bench_e2e; (3) M = 9 / 16: auto / -1 / 1; (4) the fp8 decode table; (5) path direct's
# builds 4 / 5 at M = 12 / 16 on the wide grids (against (3)'s auto); (6) the fp8 tests, then the
# nvfp4 + nn tests, until CAP seconds (second argument, default 560) after the start.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
[[ "$gpu" == *H200* ]] || { echo "not an H200: nothing to do"; exit 0; }
CAP=${2:-560}
. benchmarks/call_setup.sh "$1"
PYTHONPATH=. timeout 80 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_DIRECT --values auto,-1,auto,-1 \
  --path auto --shapes 28672x8192,128256x4096,57344x8192,28672x4096 --ms 1,2,4,8 --out "$R/rule.csv" > "$R/rule.log" 2>&1
echo "rule rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|fp8" "$R/rule.log" | cut -c1-150
timeout 90 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (nvfp4|fp8_block|int8)( static)?  " | cut -c1-100
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_DIRECT --values auto,-1,1,auto,-1,1 \
  --path auto --shapes 4096x4096,4096x14336,14336x4096,28672x8192 --ms 9,16 --out "$R/m16.csv" > "$R/m16.log" 2>&1
echo "m16 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fp8" "$R/m16.log" | cut -c1-150
timeout 110 $PY benchmarks/bench_fp8.py --full --ms 1,2,4,8,16 --forced-max-m 1 --out "$R/fp8_table" > "$R/fp8_table.log" 2>&1
echo "fp8 table rc=$? $(( $(date +%s) - t0 )) s"
grep -E "(28672x8192|128256x4096|4096x4096) M=(1|8|16) +(tq auto|tq auto static|bf16 F.linear) " "$R/fp8_table.log" | cut -c1-90
PYTHONPATH=. timeout 45 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_DIRECT_BUILD --values 4,5,4,5 \
  --path direct --shapes 28672x8192,14336x4096,128256x4096 --ms 12,16 --out "$R/builds.csv" > "$R/builds.log" 2>&1
echo "builds rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fp8" "$R/builds.log" | cut -c1-150
left=$(( CAP - ($(date +%s) - t0) )); [ $left -gt 20 ] || left=20
timeout $left $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests_fp8.log" 2>&1
echo "fp8 tests rc=$? (limit $left s) $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_fp8.log"; grep -E "^FAILED" "$R/tests_fp8.log" | head -8
left=$(( CAP - ($(date +%s) - t0) )); [ $left -gt 20 ] || left=20
timeout $left $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_nn.py > "$R/tests.log" 2>&1
echo "tests rc=$? (limit $left s) $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -8
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
