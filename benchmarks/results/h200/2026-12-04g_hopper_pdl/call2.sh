#!/usr/bin/env bash
# 2026-12-04g call 2: why the nvfp4 x-resident mma GEMV slows from M = 1 to M = 4 (28672x8192 bf16
# 42.8 -> 49.6 us with the same SASS): SM clock and board power per op and M while each runs back
# to back (benchmarks/micro/clock_probe.py, nvidia-smi sampling every 50 ms), and Nsight Compute
# stall sampling of the kernel at M = 1 and M = 4 in one build.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv > "$R/env.txt"
export TORCHQUANT_ONLY_SOURCES=csrc/nvfp4/nvfp4_gemv.cu,csrc/fp8/fp8_block_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu,csrc/int8/int8_matmul.cu
t0=$(date +%s)
timeout 300 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
S=nvfp4:28672:8192
PYTHONPATH=. timeout 200 $PY benchmarks/micro/clock_probe.py --seconds 3 --out "$R/clock" \
  --phases $S:1,$S:2,$S:4,$S:8:mma,$S:8,$S:16,$S:1:wgmma,$S:4:wgmma,dense:28672:8192:1,dense:28672:8192:8,int8:28672:8192:1,fp8:28672:8192:1,fp8:28672:8192:8,$S:1,$S:4 \
  > "$R/clock.log" 2>&1
echo "clock rc=$?"; cat "$R/clock.txt"; tail -n 3 "$R/clock.log"
bash benchmarks/micro/ncu_source.sh "$R" mma_m1 nvfp4_gemv_mma --only 28672,8192,1 --ops nvfp4 --paths mma \
  | head -c 2200; echo
bash benchmarks/micro/ncu_source.sh "$R" mma_m4 nvfp4_gemv_mma --only 28672,8192,4 --ops nvfp4 --paths mma \
  | head -c 2200; echo
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
