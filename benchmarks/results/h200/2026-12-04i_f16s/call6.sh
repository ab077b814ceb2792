#!/usr/bin/env bash
# 2026-12-04i call 6: compute-sanitizer racecheck and synccheck (first runs of either tool in this
# project) on the nvfp4 GEMV kernels that share data through shared memory: the x-resident kernel
# with its fp16 loop's block vote (__syncthreads_or) and bf16 restaging (nvfp4_xres_memcheck.py),
# and the ring / K-split / per-k-warp-staging kernels (smem_racecheck.py --only nvfp4). nvfp4
# source alone built; logs left as plain files (no tar) so a timeout still returns them.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/nvfp4/nvfp4_gemv.cu timeout 100 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
cs() {  # name, timeout, tool args..., script args...
  local name=$1 to=$2; shift 2
  local t1=$(date +%s)
  PYTHONPATH=. timeout "$to" compute-sanitizer --print-limit 20 "$@" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - t1 )) s"; tail -n 2 "$R/$name.log"
}
cs race_xres 40 --tool racecheck --racecheck-report hazard $PY benchmarks/micro/nvfp4_xres_memcheck.py
cs sync_xres 25 --tool synccheck $PY benchmarks/micro/nvfp4_xres_memcheck.py
cs race_nvfp4 30 --tool racecheck --racecheck-report hazard $PY benchmarks/micro/smem_racecheck.py --only nvfp4
echo "elapsed $(( $(date +%s) - t0 )) s"
