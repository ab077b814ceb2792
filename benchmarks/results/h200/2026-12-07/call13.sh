#!/usr/bin/env bash
# 2026-12-08 call 13, either card, on `.prebuilt/sm90` (3cd744f's csrc). On an H200 the A/B
# first, the questions issues 4 and 5 ask there (the budget is short and starts fail): path auto
# on the row-major / tiled fp8_block weight beside bf16 cuBLAS (the ring kernel's tiled form is
# what auto runs there at M <= 4), nvfp4 auto on layout 3 / 4 beside cuBLAS, then the ring and
# direct kernels' own A/B on the two largest layers; then the tiled GPU tests (QuantLinear
# fp8_tiled's among them, never run on a GPU) and bench_e2e M = 1 / 8. On any other card
# call12.sh (the tests and bench_e2e).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
CAP=${2:-560}
if [[ "$gpu" != *H200* ]]; then exec bash benchmarks/results/h200/2026-12-07/call12.sh "$1" "$CAP"; fi
. benchmarks/call_setup.sh "$1"
E=benchmarks/micro/env_ab.py
ab fp8_tiled_auto 120 $E --op fp8 --var tiled --values 0,1,0,1 --path auto --dense \
  --shapes 28672x8192,128256x4096,4096x4096 --ms 1,2,4,8,16
ab nv_tiled_auto 120 $E --op nvfp4 --var layout --values 3,4,3,4 --path auto --dense \
  --shapes 28672x8192,128256x4096,4096x4096 --ms 1,2,4,8,16
for P in mma direct; do
  ab fp8_tiled_$P 70 $E --op fp8 --var tiled --values 0,1,0,1 --path $P --shapes 28672x8192,14336x4096 --ms 1,8,16
done
ab nv_tiled_mma 60 $E --op nvfp4 --var layout --values 3,4,3,4 --path mma --shapes 28672x8192,128256x4096 --ms 1,8
tar czf "$OUT/a.tgz" -C "$OUT" r && rm -rf "$R"
left=$(( CAP - ($(date +%s) - t0) ))
if (( left > 120 )); then
  mkdir -p "$R"
  gpu_tests $(( left > 200 ? 150 : left - 50 )) "tiled or test_nn_fp8_tiled" tests/test_nn_fp8_tiled.py \
    tests/test_fp8_cuda.py tests/test_nvfp4_layout.py
  left=$(( CAP - ($(date +%s) - t0) ))
  if (( left > 100 )); then
    e2e_rows $(( left - 30 ))
  fi
  tar czf "$OUT/q.tgz" -C "$OUT" r && rm -rf "$R"
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
