#!/usr/bin/env bash
# Session 2026-12-03b call 3: int8 decode through the wgmma GEMM (forced) per tile configuration,
# the gemv beside it in the same process (int8 sources only). Results land in $OUT/r.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu timeout 200 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
ab() {  # name, env_ab arguments
  local name=$1; shift
  local t0=$(date +%s)
  PYTHONPATH=. timeout 100 $PY benchmarks/micro/env_ab.py --op int8 "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 )) s"; grep "M=" "$R/$name.log"
}
for t in 64x128c1 64x64c1 64x128k2 64x64k2; do
  ab tile_$t --var path --values gemv,wgmma,gemv,wgmma --env TORCHQUANT_INT8_WGMMA_TILE=$t \
    --shapes 28672x8192,128256x4096,14336x4096 --ms 16,32
done
