#!/usr/bin/env bash
# 2026-12-05h call 7. On an H200: the timings owed since 2026-12-05g
# (results/h200/2026-12-05g/call3.sh) and nothing else. On any other card:
# benchmarks/micro/nvfp4_direct_shape.cu (the nvfp4 decode GEMV in the int8 GEMV's stream shape,
# a probe outside the extension, with a pure read of the same bytes first; since call 6 the persistent form that stages x once per block in shared memory and reads layout 1 as the extension stores it; call 7 adds U = 3, the natural-order form on a persistent grid and M = 2), then the extension's
# nvfp4 GEMV on the same shapes in the same machine (env_ab.py, layout 1, bf16, auto, two rounds).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
case "$gpu" in *H200*) exec bash benchmarks/results/h200/2026-12-05g/call3.sh "$1";; esac
. benchmarks/call_setup.sh "$1"
(cd benchmarks/micro && nvcc -O3 -arch=sm_90 -I../../csrc -o "$R/nvfp4_direct_shape" nvfp4_direct_shape.cu -Xptxas -v > "$R/direct_build.log" 2>&1)
echo "nvcc rc=$? $(( $(date +%s) - t0 )) s"
timeout 300 "$R/nvfp4_direct_shape" 28672x8192 128256x4096 14336x4096 4096x4096 > "$R/direct.log" 2>&1
echo "direct rc=$? $(( $(date +%s) - t0 )) s"; cat "$R/direct.log"
rm -f "$R/nvfp4_direct_shape"
PYTHONPATH=. timeout 120 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 1 --path auto \
  --shapes 28672x8192,128256x4096,14336x4096,4096x4096 --var TORCHQUANT_NVFP4_KS --values auto,auto --ms 1,2,4,8 \
  --out "$R/main.csv" > "$R/main.log" 2>&1
echo "main rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/main.log"
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
