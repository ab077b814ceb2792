#!/usr/bin/env bash
# 2026-12-07 call 1, either card: every check owed to a GPU since 2026-12-06j (whose drivers never
# ran and were folded into this one), the tests first (one pytest run), then the A/Bs by what they
# decide, so a short device budget still gets the tests. Owed tests: the callers of conftest's
# misaligned() (5d9423b), nvfp4's direct auto rule with b87993c's wide-card clause, and on an H200
# the card branches of 6c27f9d (fp8 direct_rule's narrow_dram gate) and 1c814d2 (sparse24 M = 2
# small-grid rule). Then on an H200: b87993c's A/B (auto against TORCHQUANT_NVFP4_DIRECT_MAX_M=-1,
# 8192x4096 as the unchanged control), bench_e2e, fp8's M5_MIN A/B on the layer's gate_up, the
# sparse24 M = 1..2 A/B, fp8 M = 12 / 16 with the wgmma GEMV's K split forced to 2, bench_e2e under
# M5_MIN; on another card, only with ONLY_H200=0, the fp8, nvfp4 and sparse24 CUDA tests until CAP s.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
# The H100 branch ran in session 12-07b (results/h100/2026-12-07, all passed); ONLY_H200=1
# (the default) ends the call on any other card before it spends device time.
if [[ "${ONLY_H200:-1}" == 1 && "$gpu" != *H200* ]]; then echo "not an H200: nothing owed here"; exit 0; fi
CAP=${2:-400}
# H200 steps run only while their timeout still fits in CAP seconds, so the tarball at the end
# is always written (more than 8 loose files under $OUT would not all come back).
# step SECS NAME CMD...: CMD under timeout SECS, output to $R/NAME.log, its rc and the elapsed time.
step() {
  local secs=$1 name=$2; shift 2
  if [ $(( $(date +%s) - t0 + secs )) -gt "$CAP" ]; then echo "skipped (CAP $CAP s): $name"; return 1; fi
  timeout "$secs" "$@" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 )) s"
}
. benchmarks/call_setup.sh "$1"
timeout 150 $PY -m pytest -q -rs -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_nvfp4_cuda.py \
  tests/test_sparse24.py tests/test_fuzz_args.py tests/test_sparse24_wgmma_cuda.py \
  -k "pointer_alignment or quantize_fp8_act_matches_cpu or direct_views_graph or misaligned_views or mutated_args_cuda or direct_auto_rule or layout_default or direct_rule or small_grid_rule or auto_half_rule or auto_int8_rule" \
  > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -8
if [[ "$gpu" == *H200* ]]; then
  step 60 nv_m58 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --var TORCHQUANT_NVFP4_DIRECT_MAX_M \
    --values auto,-1,auto,-1 --path auto --shapes 10240x4096,11008x4096,12288x4096,14336x4096,8192x4096 --ms 5,8 \
    --out "$R/nv_m58.csv" && grep -E "^nvfp4|ceiling" "$R/nv_m58.log"
  step 60 e2e $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" && grep -E "fused" "$R/e2e.log" \
    | grep -E "bf16 F.linear|QuantLinear (nvfp4|fp8_block|int8|sparse24)( static)?  " | cut -c1-100
  step 50 m5min env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_WGMMA_M5_MIN --values auto,100,auto,100 \
    --path auto --shapes 28672x4096,14336x4096 --ms 5,8 --out "$R/m5min.csv" && grep -E "^fp8" "$R/m5min.log"
  step 40 sp24_m2 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op sparse24 --var path --values auto,fma,wgmma,auto \
    --shapes 4096x4096,2048x2048,4096x14336 --ms 1,2 --out "$R/sp24_m2.csv" && grep sparse24 "$R/sp24_m2.log"
  # fp8 M = 12 / 16 through the wgmma GEMV, its K split forced to 2 (448 CTAs on 28672x8192)
  step 45 split16 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_DQ_WGMMA_SPLITS --values auto,2,auto,2 \
    --path auto --shapes 28672x8192,14336x4096 --ms 12,16 --out "$R/split16.csv" && grep -E "^fp8" "$R/split16.log"
  step 60 e2e_m5min env TORCHQUANT_FP8_WGMMA_M5_MIN=100 $PY benchmarks/bench_e2e.py --ms 8 --out "$R/e2e_m5min" \
    && grep -E "fused" "$R/e2e_m5min.log" | grep -E "bf16 F.linear|QuantLinear fp8_block( static)?  " | cut -c1-100
else
  left=$(( CAP - ($(date +%s) - t0) )); [ $left -gt 20 ] || left=20
  timeout $left $PY -m pytest -q -rs -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_nvfp4_cuda.py tests/test_sparse24.py > "$R/full_tests.log" 2>&1
  echo "full tests rc=$? (limit $left s) $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/full_tests.log"; grep -E "^FAILED" "$R/full_tests.log" | head -8
fi
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
