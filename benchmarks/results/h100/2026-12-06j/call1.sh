#!/usr/bin/env bash
# 2026-12-06j call 1, either card. First, under their tests: the callers of conftest's misaligned()
# (5d9423b, not yet run on a GPU: test_fp8_cuda's dequantize alignment and quantize_fp8_act cases,
# test_nvfp4_cuda's direct views, test_sparse24's misaligned views, test_fuzz_args' CUDA half) and
# nvfp4's direct auto rule with b87993c's wide-card clause. Then on an H200 what 12-06i call3.sh
# left (the card rules of 6c27f9d / 1c814d2 under their tests, the sparse24 M = 1..2 A/B,
# bench_e2e) and the A/Bs below; on an H100 the fp8 + nvfp4 + sparse24 CUDA tests until CAP.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
CAP=${2:-400}
. benchmarks/call_setup.sh "$1"
timeout 120 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_nvfp4_cuda.py \
  tests/test_sparse24.py tests/test_fuzz_args.py \
  -k "pointer_alignment or quantize_fp8_act_matches_cpu or direct_views_graph or misaligned_views or mutated_args_cuda or direct_auto_rule or layout_default" \
  > "$R/misaligned.log" 2>&1
echo "misaligned callers rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/misaligned.log"; grep -E "^FAILED" "$R/misaligned.log" | head -8
if [[ "$gpu" == *H200* ]]; then
  # nvfp4 layout 3 at M = 5..8 on grids of SMs + 1 .. 2 x SMs 64-row blocks with K = 4096: auto (the
  # direct GEMV's 64-row build since b87993c) against MAX_M = -1 (the wgmma GEMV); 12-06e had
  # 14336x4096 M = 8 13.9 against 15.4-15.6; 8192x4096 (one 64-row wave) and 28672x4096 (past
  # 2 x SMs) are outside the rule (the same kernel both ways)
  PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values auto,-1,auto,-1 \
    --path auto --shapes 10240x4096,11008x4096,12288x4096,14336x4096,8192x4096 --ms 4,5,6,8 --out "$R/nv_m58.csv" > "$R/nv_m58.log" 2>&1
  echo "nv_m58 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^nvfp4" "$R/nv_m58.log"
  timeout 70 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
  echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (nvfp4|fp8_block|int8)( static)?  " | cut -c1-100
  timeout 80 $PY -m pytest -q -p no:cacheprovider -n 8 tests/test_fp8_cuda.py tests/test_sparse24_wgmma_cuda.py \
    -k "direct_rule or small_grid_rule or auto_half_rule or auto_int8_rule" > "$R/rule_tests.log" 2>&1
  echo "rule tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/rule_tests.log"; grep -E "^FAILED" "$R/rule_tests.log" | head -8
  PYTHONPATH=. timeout 45 $PY benchmarks/micro/env_ab.py --op sparse24 --var path --values auto,fma,wgmma,auto \
    --shapes 4096x4096,2048x2048,4096x14336,3072x4096 --ms 1,2 --out "$R/sp24_m2.csv" > "$R/sp24_m2.log" 2>&1
  echo "sp24 rc=$? $(( $(date +%s) - t0 )) s"; grep sparse24 "$R/sp24_m2.log"
  # fp8 at M = 5..8 on the layer's gate_up shape: the wgmma GEMV (M5_MIN = 100: from 105M weights,
  # so 28672x4096 but not the 4096-feature layers) against the ring kernel (auto: from 256M)
  PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_WGMMA_M5_MIN --values auto,100,auto,100 \
    --path auto --shapes 28672x4096,14336x4096,28672x8192 --ms 5,8 --out "$R/m5min.csv" > "$R/m5min.log" 2>&1
  echo "m5min rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^fp8" "$R/m5min.log"
  # fp8 M = 12 / 16 through the wgmma GEMV: its K split forced to 2 (448 CTAs on 28672x8192; the
  # rule keeps 224 unsplit, between one and two CTAs per SM) against auto
  PYTHONPATH=. timeout 45 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_DQ_WGMMA_SPLITS --values auto,2,auto,2 \
    --path auto --shapes 28672x8192,14336x4096 --ms 12,16 --out "$R/split16.csv" > "$R/split16.log" 2>&1
  echo "split16 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^fp8" "$R/split16.log"
  TORCHQUANT_FP8_WGMMA_M5_MIN=100 timeout 60 $PY benchmarks/bench_e2e.py --ms 8 --out "$R/e2e_m5min" > "$R/e2e_m5min.log" 2>&1
  echo "e2e m5min rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_m5min.log" | grep -E "bf16 F.linear|QuantLinear fp8_block( static)?  " | cut -c1-100
else
  left=$(( CAP - ($(date +%s) - t0) )); [ $left -gt 20 ] || left=20
  timeout $left $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_nvfp4_cuda.py tests/test_sparse24.py > "$R/tests.log" 2>&1
  echo "tests rc=$? (limit $left s) $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -8
fi
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
