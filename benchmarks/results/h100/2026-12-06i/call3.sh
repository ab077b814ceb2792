#!/usr/bin/env bash
# 2026-12-06i call 3, H200 only (an H100 exits at once; call2 ran the H100 branch): the
# card-dependent rules of 6c27f9d / 1c814d2 under their tests on an H200, the sparse24 M = 1..2
# A/B (auto / fma / wgmma) and bench_e2e at M = 1 / 8.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
[[ "$gpu" == *H200* ]] || { echo "not an H200: nothing to do"; exit 0; }
. benchmarks/call_setup.sh "$1"
timeout 80 $PY -m pytest -q -p no:cacheprovider -n 8 tests/test_fp8_cuda.py tests/test_sparse24_wgmma_cuda.py \
  -k "direct_rule or small_grid_rule or auto_half_rule or auto_int8_rule" > "$R/rule_tests.log" 2>&1
echo "rule tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/rule_tests.log"; grep -E "^FAILED" "$R/rule_tests.log" | head -8
PYTHONPATH=. timeout 45 $PY benchmarks/micro/env_ab.py --op sparse24 --var path --values auto,fma,wgmma,auto \
  --shapes 4096x4096,2048x2048,4096x14336,3072x4096 --ms 1,2 --out "$R/sp24_m2.csv" > "$R/sp24_m2.log" 2>&1
echo "sp24 rc=$? $(( $(date +%s) - t0 )) s"; grep sparse24 "$R/sp24_m2.log"
timeout 70 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (nvfp4|fp8_block|int8)( static)?  " | cut -c1-100
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
