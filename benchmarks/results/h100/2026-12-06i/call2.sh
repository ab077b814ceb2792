#!/usr/bin/env bash
# 2026-12-06i call 2, either card: the card-dependent rules of 6c27f9d / 1c814d2 under their tests
# (fp8 direct_rule only on cards of <= 15.0 DRAM bytes per SM clock; sparse24_gemv's M = 2 K-split
# tile from K = 4096 on the other cards), then on an H200 the sparse24 A/B at M = 1..3 (auto / fma
# / wgmma) and bench_e2e; on an H100 the fp8 direct A/B (auto / TORCHQUANT_FP8_DIRECT=-1) on two
# layers, which must still show the direct GEMV there. Then the fp8 + sparse24 CUDA tests until CAP.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
CAP=${2:-420}
. benchmarks/call_setup.sh "$1"
timeout 120 $PY -m pytest -q -p no:cacheprovider -n 8 tests/test_fp8_cuda.py tests/test_sparse24_wgmma_cuda.py \
  -k "direct_rule or small_grid_rule or auto_half_rule or auto_int8_rule" > "$R/rule_tests.log" 2>&1
echo "rule tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/rule_tests.log"; grep -E "^FAILED" "$R/rule_tests.log" | head -8
if [[ "$gpu" == *H200* ]]; then
  PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op sparse24 --var path --values auto,fma,wgmma,auto \
    --shapes 4096x4096,1024x4096,2048x2048,4096x14336,3072x4096 --ms 1,2 --out "$R/sp24_m2.csv" > "$R/sp24_m2.log" 2>&1
  echo "sp24 rc=$? $(( $(date +%s) - t0 )) s"; grep sparse24 "$R/sp24_m2.log"
  timeout 90 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
  echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (nvfp4|fp8_block|int8)( static)?  " | cut -c1-100
else
  PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_DIRECT --values auto,-1,auto,-1 \
    --path auto --shapes 28672x8192,28672x4096 --ms 1,8 --out "$R/rule.csv" > "$R/rule.log" 2>&1
  echo "rule rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|fp8" "$R/rule.log" | cut -c1-150
fi
left=$(( CAP - ($(date +%s) - t0) )); [ $left -gt 20 ] || left=20
timeout $left $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_sparse24_wgmma_cuda.py tests/test_sparse24.py > "$R/tests.log" 2>&1
echo "tests rc=$? (limit $left s) $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -8
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
