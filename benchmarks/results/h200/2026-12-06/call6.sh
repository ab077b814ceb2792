#!/usr/bin/env bash
# 2026-12-06 call 6: one machine start for both H200 drivers. On an H200: 12-05j's call3.sh (its
# checks of direct_build, the wide-grid rule and the layout-3 default, and the builds' A/B there),
# then call4.sh (the issue rows, the probe) in what is left of ~300 s. On an H100 (whose call 3
# ran in 12-06, ../../h100/2026-12-06): the wide-grid rule's M = 1..4 A/B, then call4.sh's issue
# rows (the probe ran there in 12-05h).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
s0=$(date +%s)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
if [[ "$gpu" == *H200* ]]; then
  bash benchmarks/results/h100/2026-12-05j/call3.sh "$1/c3"
else  # the H100's wide-grid rule at M = 1..4 (12-06 call 3: 14336x4096 lost 0.4 us at M = 4)
  . benchmarks/call_setup.sh "$1/c7"
  PYTHONPATH=. timeout 80 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto \
    --shapes 14336x4096,28672x4096,28672x8192 --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values 4,-1,4,-1 \
    --ms 1,2,3,4 --out "$R/wide.csv" > "$R/wide.log" 2>&1
  echo "wide rc=$?"; grep -E "ceiling|nvfp4" "$R/wide.log"
fi
left=$(( ${CALL6_TOTAL:-300} - ($(date +%s) - s0) )); [[ "$gpu" == *H200* ]] || left=0
CALL_LEFT=$left bash benchmarks/results/h200/2026-12-06/call4.sh "$1/c4"
