#!/usr/bin/env bash
# 2026-12-08 call 14, either card, on the build of bccb971 or later (the dequantizing GEMM and the
# wgmma GEMV read the tiled fp8 weight in place). On an H200 first the A/B call13.sh runs first
# (the tiled fp8 weight, whose auto now takes the tiled wgmma GEMV at M = 9..16 there, and nvfp4
# layout 4, beside cuBLAS: issues 4 / 5); then on either card the GPU tests of the tiled forms
# (the dq GEMM's and wgmma GEMV's new ones, QuantLinear fp8_tiled's, the other GEMVs'), the wgmma
# GEMV on rows / tiled, the prefill A/B (dq GEMM on rows / tiled / untile + GEMM beside
# dequantize + cuBLAS and bf16 cuBLAS) and bench_e2e M = 1 / 8.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
CAP=${2:-560}
. benchmarks/call_setup.sh "$1"
E=benchmarks/micro/env_ab.py
if [[ "$gpu" == *H200* ]]; then
  ab fp8_tiled_auto 120 $E --op fp8 --var tiled --values 0,1,0,1 --path auto --dense \
    --shapes 28672x8192,128256x4096,4096x4096 --ms 1,2,4,8,16
  ab nv_tiled_auto 120 $E --op nvfp4 --var layout --values 3,4,3,4 --path auto --dense \
    --shapes 28672x8192,128256x4096,4096x4096 --ms 1,2,4,8,16
  ab fp8_tiled_mma 70 $E --op fp8 --var tiled --values 0,1,0,1 --path mma --shapes 28672x8192,14336x4096 --ms 1,8,16
fi
left=$(( CAP - ($(date +%s) - t0) ))
gpu_tests $(( left > 260 ? 150 : left / 2 )) "tiled" tests/test_fp8_wgmma_cuda.py tests/test_nn_fp8_tiled.py \
  tests/test_fp8_cuda.py tests/test_nvfp4_layout.py
ab fp8_tiled_wgmma 50 $E --op fp8 --var tiled --values 0,1,0,1 --path wgmma --shapes 28672x8192,128256x4096 --ms 8,16
ab dq_tiled 60 benchmarks/micro/dq_wgmma_ab.py --tiled --shapes 28672x8192,4096x4096 --ms 64,512,2048
left=$(( CAP - ($(date +%s) - t0) ))
if (( left > 100 )); then
  e2e_rows $(( left - 30 < 150 ? left - 30 : 150 ))
fi
if (( CAP - ($(date +%s) - t0) > 100 )); then  # memcheck over the tiled wgmma GEMV and dq GEMM
  PYTHONPATH=. timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 $PY \
    benchmarks/micro/fp8_wgmma_memcheck.py tiled > "$R/memcheck.log" 2>&1
  echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 "$R/memcheck.log"
fi
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
