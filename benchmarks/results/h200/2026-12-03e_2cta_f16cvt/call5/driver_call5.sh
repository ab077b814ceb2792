#!/usr/bin/env bash
# Session 2026-12-03e call 5: the 2:4 cluster K-split decode tile (16c1k) with its tile and auto
# rules; and (call 4's plan, which found no machine) the fp8 fp16 / bf16 tables and the fused
# layer in fp16 and bf16. Sparse + int8 + fp8 + nvfp4 sources.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/sparse/sparse24.cu,csrc/sparse/sparse24_gemm_sm90a.cu,csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu,csrc/fp8/fp8_block_gemv.cu,csrc/nvfp4/nvfp4_gemv.cu \
  timeout 280 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout -k 5 100 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_sparse24_wgmma_cuda.py tests/test_sparse24.py > "$R/tests.log" 2>&1
echo "sparse tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
t0=$(date +%s)
PYTHONPATH=. timeout 80 compute-sanitizer --tool memcheck --print-limit 20 $PY benchmarks/micro/sp24_wgmma_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 2 "$R/memcheck.log"
run() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  local t=$(date +%s)
  PYTHONPATH=. timeout $to $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - t )) s"
}
SM=4096x4096,4096x14336,6144x4096,1024x4096,8192x8192,8192x28672,10240x8192
run ks_tile 50 --op sparse24 --var TORCHQUANT_SP24_WGMMA_TILE --path wgmma --values 16c1,16c1k --shapes $SM --ms 1,8,16
run ks_tile_i8 40 --op sparse24_int8 --var TORCHQUANT_SP24_WGMMA_TILE --path wgmma --values 16c1,16c1k --shapes $SM --ms 1,8,16
run ks_n 30 --op sparse24 --var TORCHQUANT_SP24_KSPLIT --path wgmma --values 2,4,8 --env TORCHQUANT_SP24_WGMMA_TILE=16c1k --shapes 4096x4096,4096x14336,1024x4096 --ms 8
run paths 60 --op sparse24 --var path --values auto,fma,mma,wgmma --shapes $SM --ms 1,2,4,8,16 --dense
run paths_i8 50 --op sparse24_int8 --var path --values auto,gemv,mma,wgmma --shapes $SM --ms 1,2,4,8,16
run i8_dense 30 --op int8 --var path --values auto --shapes $SM --ms 1,2,8,16
t0=$(date +%s)
PYTHONPATH=. timeout 50 $PY benchmarks/micro/pdl_ab.py --formats sparse24,int8_sparse24,int8 --ms 1,8,16 --modes auto --out "$R/layer_sp.csv" > "$R/layer_sp.log" 2>&1
echo "layer sp rc=$? $(( $(date +%s) - t0 )) s"; tail -n 9 "$R/layer_sp.log"
SH=4096x4096,6144x4096,14336x4096,28672x4096,4096x14336,8192x8192,10240x8192,28672x8192,57344x8192,8192x28672,128256x4096
run fp8_f16 60 --op fp8 --act-dtype fp16 --var path --values auto --shapes $SH --ms 1,2,4,8,16 --dense
run fp8_bf16 60 --op fp8 --act-dtype bf16 --var path --values auto --shapes $SH --ms 1,2,4,8,16 --dense
for dt in fp16 bf16; do
  t0=$(date +%s)
  PYTHONPATH=. timeout 50 $PY benchmarks/micro/pdl_ab.py --dtype $dt --formats fp8_block,nvfp4 --ms 1,8,16 --modes auto,smem --out "$R/layer_$dt.csv" > "$R/layer_$dt.log" 2>&1
  echo "layer $dt rc=$? $(( $(date +%s) - t0 )) s"; tail -n 6 "$R/layer_$dt.log"
done
for f in ks_tile ks_tile_i8 ks_n paths paths_i8 i8_dense fp8_f16; do grep "M=" "$R/$f.log" | sed "s/^/$f /"; done
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
