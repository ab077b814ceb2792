#!/usr/bin/env bash
# 2026-12-07i call 11: on an H200 only, call8.sh (the tiled fp8 weight's and nvfp4 layout 4's
# tests and A/B; 3cd744f's build) in CAP seconds; on any other card it stops at once (the H100
# answers are in results/h100/2026-12-07i_call8 .. _call10).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
if [[ "$gpu" != *H200* ]]; then echo "not an H200: nothing to run"; exit 0; fi
exec bash benchmarks/results/h200/2026-12-07/call8.sh "$1" "${2:-240}"
