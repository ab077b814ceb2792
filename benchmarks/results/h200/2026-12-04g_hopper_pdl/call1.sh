#!/usr/bin/env bash
# 2026-12-04g call 1: programmatic dependent launch of the two sm_90a decode GEMVs (fp8_block and
# nvfp4 path "wgmma"; TORCHQUANT_PDL_HOPPER_GEMV=0/1 with every other kernel at its default).
# Build of the three sources involved; the new chain test and the wgmma-path tests; the Llama-3-8B
# layer chain through QuantLinear (nvfp4 M = 4..32, fp8_block M = 16) off / on, two rounds; the
# op alone back to back; nvfp4 M = 3 / 4 through the mma kernel (auto) against the wgmma GEMV.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
export TORCHQUANT_ONLY_SOURCES=csrc/nvfp4/nvfp4_gemv.cu,csrc/fp8/fp8_block_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu
t0=$(date +%s)
timeout 300 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -i "spill stores" "$R/build.log" | grep -v " 0 bytes spill" | head -3
t1=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=120 -p no:cacheprovider -n 16 tests/test_pdl_cuda.py \
  -k "hopper" > "$R/tests_pdl.log" 2>&1
echo "pdl tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_pdl.log" | head -12; tail -n 1 "$R/tests_pdl.log"
t1=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=120 -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py \
  tests/test_fp8_cuda.py -k "wgmma" > "$R/tests_wgmma.log" 2>&1
echo "wgmma tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_wgmma.log" | head -12; tail -n 1 "$R/tests_wgmma.log"
V=TORCHQUANT_PDL_HOPPER_GEMV
PYTHONPATH=. timeout 150 $PY benchmarks/micro/pdl_ab.py --formats nvfp4 --ms 4,8,16,32 \
  --var $V --modes 0,1,0,1 --out "$R/chain_nvfp4.csv" > "$R/chain_nvfp4.log" 2>&1
echo "chain nvfp4 rc=$?"; grep "fused" "$R/chain_nvfp4.log"
PYTHONPATH=. timeout 80 $PY benchmarks/micro/pdl_ab.py --formats fp8_block --ms 16 \
  --var $V --modes 0,1,0,1 --out "$R/chain_fp8.csv" > "$R/chain_fp8.log" 2>&1
echo "chain fp8 rc=$?"; grep "fused" "$R/chain_fp8.log"
ab() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout "$to" $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"
}
ab op_nvfp4 90 --op nvfp4 --path auto --var $V --values 0,1,0,1 \
  --shapes 28672x8192,6144x4096,4096x4096,4096x14336 --ms 8,16
ab op_fp8 60 --op fp8 --path auto --var $V --values 0,1,0,1 \
  --shapes 28672x8192,14336x4096 --ms 16
ab m34 90 --op nvfp4 --act-dtype bf16 --var path --values auto,wgmma,auto,wgmma \
  --shapes 28672x8192,128256x4096,57344x8192,28672x4096,14336x4096 --ms 3,4
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
