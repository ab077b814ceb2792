#!/usr/bin/env bash
# 2026-12-04i call 4: the fp8_block ring GEMV's K split on the Llama-3-8B layer's four shapes
# (6144x4096 qkv, 4096x4096 o, 28672x4096 gate_up, 4096x14336 down), bf16, M = 1 / 2 / 8:
# TORCHQUANT_FP8_KSPLIT unset (choose_ksplit) / 1 / 2 / 4 / 8 / 16, two rounds; x through the ring
# (TORCHQUANT_FP8_XRING unset / 1 wide / -1 never) at M = 8; the fp8_block layer chain at M = 1 / 8.
# fp8 source alone built. Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu timeout 200 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
ab() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout "$to" $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"
}
ab ks 150 --op fp8 --path auto --act-dtype bf16 --var TORCHQUANT_FP8_KSPLIT --values=auto,1,2,4,8,16,auto,1,2,4,8,16 \
  --shapes 6144x4096,4096x4096,28672x4096,4096x14336 --ms 1,2,8
ab xr 60 --op fp8 --path auto --act-dtype bf16 --var TORCHQUANT_FP8_XRING --values=auto,1,-1,auto,1,-1 \
  --shapes 6144x4096,4096x4096,28672x4096,4096x14336 --ms 8
PYTHONPATH=. timeout 60 $PY benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,8 \
  --var TORCHQUANT_FP8_KSPLIT --modes=auto,2,4,8,auto,2,4,8 --out "$R/chain.csv" > "$R/chain.log" 2>&1
echo "chain rc=$?"; grep "fused" "$R/chain.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
