#!/usr/bin/env bash
# Session 2026-12-03f call 2: fp8_block_gemv path "wgmma", second version (its own kernel,
# dq_gemv_sm90a_kernel: 128-wide K stages in 128-byte swizzled boxes, wait for each group). Build fp8 + dq sources; A/B against the ring kernel
# (path mma) in one process, fp16 and bf16; the tile knob; then the fp8 CUDA tests.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu \
  timeout 240 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -E "error|spill" "$R/build.log" | grep -v " 0 bytes spill" | head -5
run() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  local t=$(date +%s)
  PYTHONPATH=. timeout $to $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" 2>&1 | tee "$R/$name.log" | grep "M="
  echo "$name $(( $(date +%s) - t )) s"
}
SH=4096x4096,6144x4096,14336x4096,28672x4096,4096x14336,8192x8192,10240x8192,28672x8192,57344x8192,8192x28672,128256x4096
run f16 90 --op fp8 --var path --values mma,wgmma --shapes $SH --ms 1,4,8,16 --act-dtype fp16 --dense
run b16 90 --op fp8 --var path --values mma,wgmma --shapes $SH --ms 1,4,8,16 --dense
run tile 40 --op fp8 --var TORCHQUANT_FP8_WGMMA_TILE --path wgmma --values 16x1,16x2 --shapes 28672x8192,128256x4096,57344x8192,14336x4096 --ms 1,16 --act-dtype fp16
run tileb 40 --op fp8 --var TORCHQUANT_FP8_WGMMA_TILE --path wgmma --values 16x1,16x2 --shapes 28672x8192,128256x4096 --ms 1,16
t0=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests.log" 2>&1
echo "fp8 tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
