#!/usr/bin/env bash
# 2026-12-03i call 1: is the nvfp4 x-resident mma GEMV (M <= 4) bound per warp (latency: more
# warps per scheduler would help) or per SM (a pipe or the memory system)? Same kernel, same grid,
# with the blocks per SM cut from 2 to 1 by padding the dynamic shared memory
# (TORCHQUANT_NVFP4_SMEM_MIN=120000), at K split 2 / 4 / 8; then Nsight Compute stall
# sampling of the default launch at 28672x8192 M = 1.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/nvfp4/nvfp4_gemv.cu timeout 200 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
ab() { local name=$1; shift; PYTHONPATH=. timeout 90 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
for ks in 2 4 8; do
  ab occ_ks$ks --op nvfp4 --path mma --env TORCHQUANT_NVFP4_KS=$ks --var TORCHQUANT_NVFP4_SMEM_MIN \
    --values auto,120000,auto,120000 --shapes 28672x8192,33792x8192,128256x4096 --ms 1,4
done
ab occ_fp16 --op nvfp4 --path mma --act-dtype fp16 --var TORCHQUANT_NVFP4_SMEM_MIN \
  --values auto,120000,auto,120000 --shapes 28672x8192,33792x8192 --ms 1
PYTHON=$PY bash benchmarks/micro/ncu_source.sh "$R" nv_xres_m1 nvfp4_gemv_mma --only 28672,8192,1 --ops nvfp4 --paths mma > "$R/ncu.out" 2>&1
echo "ncu done"; head -c 3500 "$R/nv_xres_m1.stalls.txt"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
