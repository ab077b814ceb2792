#!/usr/bin/env bash
# Session 2026-12-03g call 2: full sm_90 build of the tree (fp8 ring bf16 through fp32 + the
# int8 2:4 K-split rule), then (1) the 2:4 wgmma tests (the rule change), (2) int8 2:4 paths on
# small layers at M = 2..16 and the split width on 1024x4096, (3) fp8_block_gemv tables, fp16 and
# bf16, 11 shapes x M = 1/2/4/8/16 beside cuBLAS, (4) the fused Llama-3-8B layer chain for
# fp8_block (both dtypes) and nvfp4 / int8 / 2:4 (bf16).
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
timeout 330 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout -k 5 110 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_sparse24_wgmma_cuda.py > "$R/tests_sp.log" 2>&1
echo "sp24 wgmma tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_sp.log" | head -12; tail -n 1 "$R/tests_sp.log"
ab() {  # name, timeout, env_ab arguments
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout $to $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"
}
ab i8_paths 50 --op sparse24_int8 --var path --values auto,wgmma,mma,gemv --shapes 4096x4096,4096x14336,1024x4096 --ms 2,4,8,16
ab i8_ks 20 --op sparse24_int8 --path wgmma --env TORCHQUANT_SP24_WGMMA_TILE=16c1k --var TORCHQUANT_SP24_KSPLIT --values auto,2,4 --shapes 1024x4096,4096x4096 --ms 8,16
SH=4096x4096,6144x4096,14336x4096,28672x4096,4096x14336,8192x8192,10240x8192,28672x8192,57344x8192,8192x28672,128256x4096
ab fp8_fp16 60 --op fp8 --act-dtype fp16 --var path --values auto --shapes $SH --ms 1,2,4,8,16 --dense
ab fp8_bf16 60 --op fp8 --act-dtype bf16 --var path --values auto --shapes $SH --ms 1,2,4,8,16 --dense
for dt in fp16 bf16; do
  PYTHONPATH=. timeout 40 $PY benchmarks/micro/pdl_ab.py --formats fp8_block,nvfp4 --ms 1,8,16 --modes auto,smem --dtype $dt --out "$R/layer_$dt.csv" > "$R/layer_$dt.log" 2>&1
  echo "layer $dt rc=$?"; grep fused "$R/layer_$dt.log"
done
PYTHONPATH=. timeout 50 $PY benchmarks/micro/pdl_ab.py --formats int8,int8_sparse24,sparse24 --ms 1,8,16 --modes auto --out "$R/layer_int8_sp.csv" > "$R/layer_int8_sp.log" 2>&1
echo "layer int8/sp rc=$?"; grep fused "$R/layer_int8_sp.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
