#!/usr/bin/env bash
# 2026-12-07i call 12 (written for the next session), either card, on `.prebuilt/sm90` (3cd744f's
# csrc, the last change): QuantLinear(fp8_tiled=True)'s GPU tests (tests/test_nn_fp8_tiled.py,
# never run on a GPU) with the tiled GEMVs' tests; bench_e2e at M = 1 / 8 (rows for the tiled op
# calls, QuantLinear fp8_block tiled / tiled_static, nvfp4 layout 4). Then on an H200 call8.sh in
# what is left of CAP (the tiled fp8 weight's and nvfp4 layout 4's A/B there, then call6.sh,
# call1.sh): the question whether fp8_tiled should become the default on the H200 too.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
CAP=${2:-560}
. benchmarks/call_setup.sh "$1"
timeout 120 $PY -m pytest -q -rs -p no:cacheprovider -n 16 tests/test_nn_fp8_tiled.py tests/test_fp8_cuda.py \
  -k "tiled or test_nn_fp8_tiled" > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -8
timeout 150 env PYTHONPATH=. $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" \
  | grep -E "bf16 F.linear|fp8-block tq|nvfp4 tq|QuantLinear (nvfp4|fp8_block)( static| tiled| tiled_static)?  " | cut -c1-100
tar czf "$OUT/q.tgz" -C "$OUT" r && rm -rf "$R"
left=$(( CAP - ($(date +%s) - t0) ))
if [[ "$gpu" == *H200* && $left -gt 150 ]]; then bash benchmarks/results/h200/2026-12-07/call8.sh "$OUT" $left; fi
echo "elapsed $(( $(date +%s) - t0 )) s"
