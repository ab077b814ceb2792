#!/usr/bin/env bash
# 2026-12-03h call 3: build int8 + nvfp4 + the dequantizing wgmma GEMMs; (1) int8 tests (the
# gemv deep-load rule now also takes grids of >= 16 chunks per warp), (2) that rule against
# 4 chunks on large and small grids, (3) nvfp4 at M = 8 / 16: the mma GEMV (auto) against the
# Hopper dequantizing wgmma GEMM (QuantLinear's prefill op) on the Llama-3-8B layer shapes,
# (4) Nsight Compute stall reasons of the nvfp4 mma GEMV at 28672x4096 M = 8 (gate_up).
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/nvfp4/nvfp4_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu \
  timeout 300 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_int8_cuda.py > "$R/tests_int8.log" 2>&1
echo "int8 tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_int8.log" | head -12; tail -n 1 "$R/tests_int8.log"
ab() { local name=$1; shift; PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
ab i8_deep --op int8 --var TORCHQUANT_INT8_GEMV_DEEP --path auto --values auto,-1,auto,-1 \
  --shapes 28672x8192,57344x8192,128256x8192,8192x28672,128256x4096,4096x14336 --ms 1,8
ab nv_gemm --op nvfp4 --var path --values auto,gemm_sm90a,auto,gemm_sm90a \
  --shapes 28672x8192,28672x4096,14336x4096,4096x14336,6144x4096 --ms 8,16
ab nv_gemm_t --op nvfp4 --var TORCHQUANT_DQ_WGMMA_TILE --path gemm_sm90a --values auto,128c1 \
  --shapes 28672x8192,28672x4096 --ms 8
echo "elapsed $(( $(date +%s) - t0 )) s"
if [ $(( $(date +%s) - t0 )) -lt 430 ]; then
  PYTHON=$PY timeout 120 bash benchmarks/micro/ncu_source.sh "$R" nv_mma_m8 nvfp4_gemv_mma \
    --only 28672,4096,8 --ops nvfp4 --paths mma | head -n 60
fi
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
