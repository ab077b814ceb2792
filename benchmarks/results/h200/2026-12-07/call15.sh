#!/usr/bin/env bash
# 2026-12-08 call 15, either card, on the build of bccb971: call14.sh cut to a short budget. The
# GPU tests of 12-08's code first (the dequantizing GEMM's and the wgmma GEMV's tiled forms,
# QuantLinear fp8_tiled's, auto on the tiled weight), then on an H200 path auto on the row-major /
# tiled fp8 weight beside bf16 cuBLAS on 28672x8192 (issue 4's layer), then on either card the
# wgmma GEMV rows / tiled at M = 16 and the prefill GEMM rows / tiled at M = 512.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
CAP=${2:-300}
. benchmarks/call_setup.sh "$1"
gpu_tests 120 "tiled" tests/test_fp8_wgmma_cuda.py tests/test_nn_fp8_tiled.py tests/test_fp8_cuda.py
E=benchmarks/micro/env_ab.py
if [[ "$gpu" == *H200* ]]; then
  ab fp8_tiled_auto 80 $E --op fp8 --var tiled --values 0,1,0,1 --path auto --dense --shapes 28672x8192 --ms 1,4,8,16
fi
ab fp8_tiled_wgmma 40 $E --op fp8 --var tiled --values 0,1,0,1 --path wgmma --shapes 28672x8192 --ms 16
ab dq_tiled 40 benchmarks/micro/dq_wgmma_ab.py --tiled --shapes 28672x8192 --ms 512
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
