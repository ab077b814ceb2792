#!/bin/bash
# Call 1: the int8 GEMV load schedules, outside the extension (benchmarks/micro/int8_gemv_shapes.cu).
set -x
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv
cd benchmarks/micro && nvcc -O3 -arch=sm_90 -I../../csrc -o /tmp/igs int8_gemv_shapes.cu || exit 1
/tmp/igs 2>&1 | tee $OUT/int8_gemv_shapes.txt
/tmp/igs 28672x8192 2>&1 | tee $OUT/int8_gemv_shapes_r2.txt
