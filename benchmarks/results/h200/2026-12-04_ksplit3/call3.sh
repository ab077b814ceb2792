#!/usr/bin/env bash
# 2026-12-04 call 3: what the small layers' launch shape gives against the read floor of call 2.
# fp8_block M = 1 (bf16): the K split (TORCHQUANT_FP8_KSPLIT), x through the ring
# (TORCHQUANT_FP8_XRING) and PDL on the layer's four shapes; nvfp4 M = 1: the warps' K split
# (TORCHQUANT_NVFP4_KS) and the blocks' K split (TORCHQUANT_NVFP4_SPLITK) on 4096x4096 and
# 6144x4096; the layer chain with TORCHQUANT_PDL=smem (weights before the wait) for the record.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/nvfp4/nvfp4_gemv.cu \
  timeout 200 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
ab() { local name=$1; shift; PYTHONPATH=. timeout 90 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
S8=6144x4096,4096x4096,4096x14336,28672x4096
ab fp8_ks --op fp8 --path auto --var TORCHQUANT_FP8_KSPLIT --values auto,2,4,8,16,auto --shapes $S8 --ms 1
ab fp8_xr --op fp8 --path auto --var TORCHQUANT_FP8_XRING --values auto,1,-1,auto --shapes $S8 --ms 1
ab fp8_ks8_pdl --op fp8 --path auto --var TORCHQUANT_PDL --values auto,0,auto,0 --env TORCHQUANT_FP8_KSPLIT=8 --shapes 6144x4096 --ms 1
ab nv_ks --op nvfp4 --path auto --var TORCHQUANT_NVFP4_KS --values auto,1,2,4,8,auto --shapes 4096x4096,6144x4096 --ms 1
ab nv_split --op nvfp4 --path auto --var TORCHQUANT_NVFP4_SPLITK --values auto,1,2,4,auto --shapes 4096x4096,6144x4096 --ms 1
PYTHONPATH=. timeout 90 $PY benchmarks/micro/pdl_ab.py --formats fp8_block,nvfp4 --ms 1 \
  --modes auto,smem,auto,smem --out "$R/layer_smem.csv" > "$R/layer_smem.log" 2>&1
echo "layer rc=$?"; tail -n 4 "$R/layer_smem.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
