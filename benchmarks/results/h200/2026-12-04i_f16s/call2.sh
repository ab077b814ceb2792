#!/usr/bin/env bash
# 2026-12-04i call 2: call 1's timings again (there argparse refused the option values that start
# with '-'; here they are passed as --values=...). nvfp4 alone built; the x-resident op with
# TORCHQUANT_NVFP4_F16 -1 (bf16 loop, default) / 1 (checked fp16 loop) / 3 (scaled fp16 loop) on six
# shapes at M = 1..4 in two rounds, again on x with no |x| below 2^-10; x = gelu(S randn) for S = 1 / 1.5;
# the Llama-3-8B layer chain.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
export TORCHQUANT_ONLY_SOURCES=csrc/nvfp4/nvfp4_gemv.cu
t0=$(date +%s)
timeout 240 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -i "spill stores" "$R/build.log" | grep -v " 0 bytes spill" | head -3
ab() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout "$to" $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"
}
ab f16 120 --op nvfp4 --path mma --act-dtype bf16 --var TORCHQUANT_NVFP4_F16 --values=-1,1,3,-1,1,3 \
  --shapes 28672x8192,128256x4096,28672x4096,4096x14336,6144x4096,4096x4096 --ms 1,2,3,4
ab f16_clean 90 --op nvfp4 --path mma --act-dtype bf16 --var TORCHQUANT_NVFP4_F16 --values=-1,1,3,-1,1,3 \
  --shapes 28672x8192,28672x4096,6144x4096,4096x4096 --ms 1,2,3,4 --x-min-abs 0.0009765625
# x = gelu(S randn), an FFN down projection's input (CPU, 64 rows of 14336): S = 1 leaves fp16's exact
# range in 16 % of rows, S = 1.5 in every row; |x| spans 2^16-2^18 and 2^25 per row, inside F16=3's 2^33
ab f16_gelu1 60 --op nvfp4 --path mma --act-dtype bf16 --var TORCHQUANT_NVFP4_F16 --values=-1,1,3,-1,1,3 \
  --shapes 4096x14336,28672x8192 --ms 1,2,3,4 --x-gelu 1
ab f16_gelu15 60 --op nvfp4 --path mma --act-dtype bf16 --var TORCHQUANT_NVFP4_F16 --values=-1,1,3,-1,1,3 \
  --shapes 4096x14336,28672x8192 --ms 1,2,3,4 --x-gelu 1.5
PYTHONPATH=. timeout 100 $PY benchmarks/micro/pdl_ab.py --formats nvfp4 --ms 1,2,4 \
  --var TORCHQUANT_NVFP4_F16 --modes=-1,1,3,-1,1,3 --out "$R/chain.csv" > "$R/chain.log" 2>&1
echo "chain rc=$?"; grep "fused" "$R/chain.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
