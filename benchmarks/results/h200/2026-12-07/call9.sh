#!/usr/bin/env bash
# 2026-12-07i call 9, either card. On an H200: call8.sh whole (the tiled fp8_block weight's tests
# and A/B, nvfp4's ring on layout 3 / 4; then call6.sh, call1.sh in what is left). On an H100
# (call 8 ran there at 21:58, results/h100/2026-12-07i_call8: the tiled direct GEMV fastest at
# M <= 8 on every layer timed): the fixed layout-4 ring refusal test, then the tiled weight's
# paths direct / mma on the layers call 8 did not time (auto's rule for tiled=True), M = 1..16,
# and nvfp4 layout 4's paths direct / mma (its auto rule), cold L2.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
CAP=${2:-540}
if [[ "$gpu" == *H200* ]]; then exec bash benchmarks/results/h200/2026-12-07/call8.sh "$1" "$CAP"; fi
. benchmarks/call_setup.sh "$1"
timeout 90 $PY -m pytest -q -rs -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py -k "ring_tiled" > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -8
timeout 150 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op fp8 --var path --values direct,mma,direct,mma --tiled \
  --shapes 4096x14336,6144x4096,28672x4096,57344x8192,1024x4096,8192x8192 --ms 1,2,4,8,9,12,16 \
  --out "$R/fp8_tiled_paths.csv" > "$R/fp8_tiled_paths.log" 2>&1
echo "fp8 tiled paths rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^fp8|ceiling" "$R/fp8_tiled_paths.log"
timeout 120 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 4 --var path --values direct,mma,direct,mma \
  --shapes 28672x8192,128256x4096,14336x4096,4096x14336,4096x4096,6144x4096 --ms 1,2,4,8 \
  --out "$R/nv_l4_paths.csv" > "$R/nv_l4_paths.log" 2>&1
echo "nvfp4 layout 4 paths rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^nvfp4" "$R/nv_l4_paths.log"
tar czf "$OUT/f.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
