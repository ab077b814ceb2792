#!/usr/bin/env bash
# 2026-12-07i call 10, either card, on the build of 3cd744f (auto on the tiled fp8_block weight:
# direct_rule(..., tiled=True)). On an H200: call8.sh whole (its tests include the new rule's
# test_gemv_tiled_auto_rule; the tiled weight's A/B; nvfp4's ring on layout 3 / 4; then call6.sh
# and call1.sh in what is left). On an H100 (the rule's measurements came from there, calls 8
# and 9): the tiled tests, then bench_e2e at M = 1 / 8 (its raw-op rows now include the tiled
# fp8_block weight and nvfp4 layout 4 beside the row-major ones and QuantLinear's).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
CAP=${2:-540}
if [[ "$gpu" == *H200* ]]; then exec bash benchmarks/results/h200/2026-12-07/call8.sh "$1" "$CAP"; fi
. benchmarks/call_setup.sh "$1"
timeout 120 $PY -m pytest -q -rs -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_nvfp4_cuda.py \
  -k "tiled or direct_rule" > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -8
timeout 150 env PYTHONPATH=. $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" \
  | grep -E "bf16 F.linear|fp8-block tq|nvfp4 tq|QuantLinear (nvfp4|fp8_block)( static)?  " | cut -c1-100
tar czf "$OUT/f.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
