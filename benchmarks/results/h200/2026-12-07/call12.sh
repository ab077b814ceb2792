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
gpu_tests 120 "tiled or test_nn_fp8_tiled" tests/test_nn_fp8_tiled.py tests/test_fp8_cuda.py
e2e_rows 150
tar czf "$OUT/q.tgz" -C "$OUT" r && rm -rf "$R"
left=$(( CAP - ($(date +%s) - t0) ))
if [[ "$gpu" == *H200* && $left -gt 150 ]]; then bash benchmarks/results/h200/2026-12-07/call8.sh "$OUT" $left; fi
echo "elapsed $(( $(date +%s) - t0 )) s"
