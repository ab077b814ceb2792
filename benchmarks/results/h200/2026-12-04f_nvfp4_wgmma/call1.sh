#!/usr/bin/env bash
# 2026-12-04f call 1: the first GPU run of nvfp4_gemv's path "wgmma" (fp4_gemv_sm90a_kernel).
# One build (nvfp4_gemv.cu + the sm_90a dequantizing module), the nvfp4 CUDA tests of the new
# path and the old ones, then env_ab: auto / wgmma per shape and M (bf16, fp16), and the
# three tiles.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
export TORCHQUANT_ONLY_SOURCES=csrc/nvfp4/nvfp4_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu
t0=$(date +%s)
timeout 300 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -i "spill stores\|C75" "$R/build.log" | grep -v " 0 bytes spill" | head -5
t1=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
ab() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout "$to" $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"
}
ab path_bf16 150 --op nvfp4 --act-dtype bf16 --var path --values auto,wgmma,auto,wgmma \
  --shapes 28672x8192,128256x4096,28672x4096,14336x4096,6144x4096,4096x14336,4096x4096 --ms 1,4,8,16
ab tile_bf16 90 --op nvfp4 --act-dtype bf16 --path wgmma --var TORCHQUANT_NVFP4_WGMMA_TILE \
  --values 16x2s3,16x2s4,16x1 --shapes 28672x8192,128256x4096,14336x4096,4096x4096 --ms 1,16
ab path_fp16 60 --op nvfp4 --act-dtype fp16 --var path --values auto,wgmma \
  --shapes 28672x8192,128256x4096,14336x4096 --ms 1,8,16
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
