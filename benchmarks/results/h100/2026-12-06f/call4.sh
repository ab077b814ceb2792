#!/usr/bin/env bash
# 2026-12-06f call 4 (either card): the fp8 direct GEMV with two token tiles per block (2c4bf35, builds
# 4-5) at M = 9..16. (1) the fp8 tests; (2) path auto (the wgmma GEMV on wide layers, the ring kernel's
# 16-row tile elsewhere) against TORCHQUANT_FP8_DIRECT=1 (build 4) at M = 9, 12, 16, bf16, the Llama-3
# layers; (3) builds 4 / 5 on four of them.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
timeout 150 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests_fp8.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_fp8.log"; grep -E "^FAILED" "$R/tests_fp8.log" | head -8
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_DIRECT --values auto,1,auto,1 \
  --path auto --shapes 4096x4096,6144x4096,14336x4096,28672x4096,4096x14336,28672x8192,128256x4096 --ms 9,12,16 \
  --out "$R/m16.csv" > "$R/m16.log" 2>&1
echo "m16 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|fp8" "$R/m16.log" | cut -c1-150
PYTHONPATH=. timeout 80 $PY benchmarks/micro/env_ab.py --op fp8 --path direct --var TORCHQUANT_FP8_DIRECT_BUILD \
  --values 4,5,4,5 --shapes 28672x8192,128256x4096,14336x4096,4096x4096 --ms 12,16 --out "$R/builds.csv" > "$R/builds.log" 2>&1
echo "builds rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fp8" "$R/builds.log" | cut -c1-150
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
