#!/usr/bin/env bash
# 2026-12-04h call 1: the L1 / shared-memory split of the decode launches (TORCHQUANT_CARVEOUT,
# csrc/common/pdl.h: unset = the driver's choice, "fit" = the smallest configuration that holds
# the grid's blocks per SM, 100 = the most shared memory). The decode kernels read x through L1.
# Build of the three GEMV sources; each op alone (fp8 ring, int8 gemv, nvfp4 mma), bf16,
# two rounds of auto / fit, one of 100; the Llama-3-8B layer chain per format at M = 1 / 8.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
export TORCHQUANT_ONLY_SOURCES=csrc/nvfp4/nvfp4_gemv.cu,csrc/fp8/fp8_block_gemv.cu,csrc/int8/int8_matmul.cu
t0=$(date +%s)
timeout 240 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -i "spill stores" "$R/build.log" | grep -v " 0 bytes spill" | head -3
V=TORCHQUANT_CARVEOUT
ab() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout "$to" $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 )) s"; grep "M=" "$R/$name.log"
}
SH=28672x8192,128256x4096,4096x4096
ab fp8 100 --op fp8 --path mma --var $V --values auto,fit,100,fit --shapes $SH --ms 1,8,16
ab int8 100 --op int8 --path gemv --var $V --values auto,fit,100,fit --shapes $SH --ms 1,8,16
ab nvfp4 100 --op nvfp4 --path mma --var $V --values auto,fit,100,fit --shapes $SH --ms 1,8,16
PYTHONPATH=. timeout 120 $PY benchmarks/micro/pdl_ab.py --formats fp8_block,int8,nvfp4 --ms 1,8 \
  --var $V --modes auto,fit,auto,fit --out "$R/chain.csv" > "$R/chain.log" 2>&1
echo "chain rc=$?"; grep "fused" "$R/chain.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
