#!/usr/bin/env bash
# 2026-12-04f call 2: the auto rule (wgmma GEMV at M = 5..16), its tests, Nsight Compute stall
# sampling of fp4_gemv_sm90a_kernel (28672x8192 M = 16 and 1, bf16), M = 17..48 through the
# op's paths (auto = mma / tile GEMV, the wgmma GEMV, the dequantizing wgmma GEMM), and the
# Llama-3-8B layer chain through QuantLinear with the rule / without (MIN_M = 17).
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
export TORCHQUANT_ONLY_SOURCES=csrc/nvfp4/nvfp4_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu
t0=$(date +%s)
timeout 300 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py \
  tests/test_nvfp4_wgmma_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
bash benchmarks/micro/ncu_source.sh "$R" wg_m16 fp4_gemv_sm90a --only 28672,8192,16 --ops nvfp4 --paths wgmma \
  | head -c 2500; echo
bash benchmarks/micro/ncu_source.sh "$R" wg_m1 fp4_gemv_sm90a --only 28672,8192,1 --ops nvfp4 --paths wgmma \
  | head -c 1200; echo
ab() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout "$to" $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"
}
ab m17_48 100 --op nvfp4 --act-dtype bf16 --var path --values auto,wgmma,gemm_sm90a \
  --shapes 28672x8192,14336x4096,4096x14336,4096x4096 --ms 17,24,32,48
PYTHONPATH=. timeout 120 $PY benchmarks/micro/pdl_ab.py --formats nvfp4 --ms 1,4,8,16 \
  --var TORCHQUANT_NVFP4_WGMMA_MIN_M --modes auto,17,auto,17 --out "$R/chain.csv" > "$R/chain.log" 2>&1
echo "chain rc=$?"; tail -n 12 "$R/chain.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
