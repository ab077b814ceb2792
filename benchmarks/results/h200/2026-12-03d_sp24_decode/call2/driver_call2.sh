#!/usr/bin/env bash
# Session 2026-12-03d call 2: the decode tiles with wide stages (128 stored bytes per weight row
# and stage: 128-byte swizzled TMA boxes instead of 64-byte ones). Sparse + int8 sources: the
# sparse wgmma tests, then forced-path timings on ten shapes (bf16 2:4: fma / mma.sp / wgmma;
# int8 2:4: gemv / mma.sp / wgmma; dense int8 and bf16 cuBLAS beside), tile and box A/Bs.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/sparse/sparse24.cu,csrc/sparse/sparse24_gemm_sm90a.cu,csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  timeout 260 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout -k 5 100 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_sparse24_wgmma_cuda.py > "$R/tests.log" 2>&1
echo "sp24 wgmma tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -8; tail -n 1 "$R/tests.log"
SH=28672x8192,14336x4096,4096x14336,4096x4096,128256x4096,6144x4096,28672x4096,57344x8192,8192x8192,10240x8192
SH5=28672x8192,14336x4096,4096x14336,4096x4096,128256x4096
run() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  local t=$(date +%s)
  PYTHONPATH=. timeout $to $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - t )) s"
}
run bf16_lo 90 --op sparse24 --var path --values fma,mma,wgmma --shapes $SH --ms 1,2,4,8,16 --dense
run i8_lo 80 --op sparse24_int8 --var path --values gemv,mma,wgmma --shapes $SH --ms 1,2,4,8,16
run i8_dense 50 --op int8 --var path --values auto --shapes $SH --ms 1,8,16,32,64
run bf16_hi 50 --op sparse24 --var path --values mma,wgmma --shapes $SH5 --ms 24,32,48,64 --dense
run i8_hi 45 --op sparse24_int8 --var path --values mma,wgmma --shapes $SH5 --ms 24,32,48,64
run tiles 50 --op sparse24 --var TORCHQUANT_SP24_WGMMA_TILE --path wgmma --values 16c1,32c1,64c1,128c1 --shapes 28672x8192,14336x4096,4096x4096 --ms 8,16,32,64,96,128
run tiles_i8 45 --op sparse24_int8 --var TORCHQUANT_SP24_WGMMA_TILE --path wgmma --values 16c1,32c1,64c1,128c1 --shapes 28672x8192,14336x4096,4096x4096 --ms 8,16,32,64,96,128
run box 30 --op sparse24 --var TORCHQUANT_SP24_WGMMA_BOX --path wgmma --values auto,0 --shapes 28672x8192,4096x4096 --ms 1,8,16
for f in bf16_lo i8_lo i8_dense bf16_hi i8_hi tiles tiles_i8 box; do grep "M=" "$R/$f.log" | sed "s/^/$f /"; done
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
