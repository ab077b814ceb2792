#!/usr/bin/env bash
# 2026-12-06j call 2, either card: call1.sh cut to what the session's last device minutes hold. The
# nvfp4 direct auto rule with b87993c's wide-card clause and the misaligned() callers under their
# tests; on an H200 then the rule's A/B (auto against TORCHQUANT_NVFP4_DIRECT_MAX_M=-1) and bench_e2e.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
timeout 100 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_nvfp4_cuda.py \
  tests/test_sparse24.py tests/test_fuzz_args.py \
  -k "direct_auto_rule or pointer_alignment or direct_views_graph or misaligned_views or mutated_args_cuda" \
  > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -8
if [[ "$gpu" == *H200* ]]; then
  PYTHONPATH=. timeout 45 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values auto,-1,auto,-1 \
    --path auto --shapes 10240x4096,12288x4096,14336x4096,8192x4096 --ms 5,8 --out "$R/nv_m58.csv" > "$R/nv_m58.log" 2>&1
  echo "nv_m58 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^nvfp4|ceiling" "$R/nv_m58.log"
  timeout 60 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
  echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (nvfp4|fp8_block|int8)( static)?  " | cut -c1-100
fi
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
