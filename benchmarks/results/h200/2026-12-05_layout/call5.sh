#!/usr/bin/env bash
# 2026-12-05 call 5: the nvfp4 launch knobs again, now on the weight in the bf16 decode order
# (layout 1, QuantLinear's default on sm_80+ since f8d6da1): the decode costs fewer integer ops
# per byte, so the K split / split-K / wgmma tile choices tuned on layout 0 (docs/nvfp4_gemv.md
# 8b, 17, 20) may have moved. The Llama-3-8B layer's four shapes plus 28672x8192, M = 1..4 on
# the mma kernel, M = 8 / 16 on the wgmma GEMV.
# Run from the repository root on the device, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
. benchmarks/call_setup.sh "$1"
S=4096x4096,6144x4096,28672x4096,4096x14336,28672x8192
ab() {  # name, env_ab arguments...
  local name=$1; shift
  PYTHONPATH=. timeout 120 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 1 --shapes $S --out "$R/$name.csv" "$@" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 )) s"; cat "$R/$name.log"
}
ab ks --path mma --var TORCHQUANT_NVFP4_KS --values auto,1,2,4,8,auto --ms 1,2,4
ab splitk --path mma --var TORCHQUANT_NVFP4_SPLITK --values auto,1,2,3,4,auto --ms 1,4
ab xres --path mma --var TORCHQUANT_NVFP4_XRES --values auto,1,-1,auto --ms 1,2,4
ab wtile --path wgmma --var TORCHQUANT_NVFP4_WGMMA_TILE --values auto,16x2s3,16x2s4,16x1,auto --ms 8,16
ab wsplit --path wgmma --var TORCHQUANT_DQ_WGMMA_SPLITS --values auto,1,2,4,auto --ms 8,16
echo "elapsed $(( $(date +%s) - t0 )) s"
