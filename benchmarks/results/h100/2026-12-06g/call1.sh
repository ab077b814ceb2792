#!/usr/bin/env bash
# 2026-12-06g call 1 (either card; the H100 fallback): c04f3cc's fp8 direct_rule branch at M = 9..16
# (grids of SMs + 1 to 2 x SMs 16-row blocks). (1) the fp8 tests (test_gemv_direct_rule_small_grid);
# (2) auto against TORCHQUANT_FP8_DIRECT=-1 (which drops the branch) and 1 at M = 9 / 16 on the
# layers inside the window, at its edges and just outside; (3) bench_e2e.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
timeout 150 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests_fp8.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_fp8.log"; grep -E "^FAILED" "$R/tests_fp8.log" | head -8
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_DIRECT --values auto,-1,1,auto,-1,1 \
  --path auto --shapes 4096x4096,4096x14336,4096x8192,2560x4096,2112x8192,4224x4096,2048x4096,5120x4096 --ms 9,16 \
  --out "$R/m16.csv" > "$R/m16.log" 2>&1
echo "m16 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|fp8" "$R/m16.log" | cut -c1-150
timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (nvfp4|fp8_block|int8)( static)?  " | cut -c1-100
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
