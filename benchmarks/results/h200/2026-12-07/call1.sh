#!/usr/bin/env bash
# 2026-12-07 call 1, either card; 12-06j's call1.sh reordered for a short device budget: every
# test owed to a GPU first (one pytest run), then the A/Bs by what they decide. Owed tests: the
# callers of conftest's misaligned() (5d9423b), nvfp4's direct auto rule with b87993c's wide-card
# clause, and on an H200 the card branches of 6c27f9d (fp8 direct_rule's narrow_dram gate) and
# 1c814d2 (sparse24 M = 2 small-grid rule). Then on an H200: b87993c's A/B (auto against
# TORCHQUANT_NVFP4_DIRECT_MAX_M=-1, M = 5 / 8), bench_e2e, fp8's M5_MIN A/B on the layer's
# gate_up, the sparse24 M = 1..2 A/B. Run from the repository root, carry=[".prebuilt"]:
#   bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
timeout 150 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_nvfp4_cuda.py \
  tests/test_sparse24.py tests/test_fuzz_args.py tests/test_sparse24_wgmma_cuda.py \
  -k "pointer_alignment or quantize_fp8_act_matches_cpu or direct_views_graph or misaligned_views or mutated_args_cuda or direct_auto_rule or layout_default or direct_rule or small_grid_rule or auto_half_rule or auto_int8_rule" \
  > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -8
if [[ "$gpu" == *H200* ]]; then
  PYTHONPATH=. timeout 50 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values auto,-1,auto,-1 \
    --path auto --shapes 10240x4096,12288x4096,14336x4096,8192x4096 --ms 5,8 --out "$R/nv_m58.csv" > "$R/nv_m58.log" 2>&1
  echo "nv_m58 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^nvfp4|ceiling" "$R/nv_m58.log"
  timeout 60 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
  echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (nvfp4|fp8_block|int8|sparse24)( static)?  " | cut -c1-100
  PYTHONPATH=. timeout 50 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_WGMMA_M5_MIN --values auto,100,auto,100 \
    --path auto --shapes 28672x4096,14336x4096 --ms 5,8 --out "$R/m5min.csv" > "$R/m5min.log" 2>&1
  echo "m5min rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^fp8" "$R/m5min.log"
  PYTHONPATH=. timeout 40 $PY benchmarks/micro/env_ab.py --op sparse24 --var path --values auto,fma,wgmma,auto \
    --shapes 4096x4096,2048x2048,4096x14336 --ms 1,2 --out "$R/sp24_m2.csv" > "$R/sp24_m2.log" 2>&1
  echo "sp24 rc=$? $(( $(date +%s) - t0 )) s"; grep sparse24 "$R/sp24_m2.log"
fi
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
