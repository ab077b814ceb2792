#!/bin/bash
# Call 2: int8_gemv_shapes.cu with M = 1 / 8 / 16 variant lists, 30 ms warm-up (as timing.py) and none.
set -x
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv
cd benchmarks/micro && nvcc -O3 -arch=sm_90 -I../../csrc -o /tmp/igs int8_gemv_shapes.cu || exit 1
WARM_MS=30 /tmp/igs 28672x8192 128256x4096 14336x4096 2>&1 | tee $OUT/shapes_warm30.txt
WARM_MS=0 /tmp/igs 28672x8192 2>&1 | tee $OUT/shapes_warm0.txt
WARM_MS=30 /tmp/igs 28672x8192 2>&1 | tee $OUT/shapes_warm30_r2.txt
