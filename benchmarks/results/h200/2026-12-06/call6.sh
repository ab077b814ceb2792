#!/usr/bin/env bash
# 2026-12-06 call 6: one machine start for both H200 drivers. On an H200: 12-05j's call3.sh (its
# checks of direct_build, the wide-grid rule and the layout-3 default, and the builds' A/B there),
# then call4.sh (the issue rows, the probe) in what is left of ~300 s. On an H100 (whose call 3
# ran in 12-06, ../../h100/2026-12-06): call4.sh's issue rows alone (the probe ran there in 12-05h).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
s0=$(date +%s)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
if [[ "$gpu" == *H200* ]]; then
  TORCHQUANT_COMMIT=${TORCHQUANT_COMMIT:-unknown} bash benchmarks/results/h100/2026-12-05j/call3.sh "$1/c3"
fi
left=$(( 300 - ($(date +%s) - s0) )); [[ "$gpu" == *H200* ]] || left=0
CALL_LEFT=$left bash benchmarks/results/h200/2026-12-06/call4.sh "$1/c4"
