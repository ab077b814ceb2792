#!/usr/bin/env bash
# 2026-12-04f call 6: after the review's refactor (shared gemv_grid / forced_tile on the host,
# ConsumerLane / feat_rows in the three dequantizing kernels: their sm_90a SASS is identical to
# before, checked locally), the CUDA tests of the Hopper fp8 and nvfp4 paths and QuantLinear.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
export TORCHQUANT_ONLY_SOURCES=csrc/nvfp4/nvfp4_gemv.cu,csrc/fp8/fp8_block_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu
t0=$(date +%s)
timeout 250 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=120 -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py \
  tests/test_nvfp4_wgmma_cuda.py tests/test_fp8_wgmma_cuda.py tests/test_fp8_cuda.py -k "not pdl" > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
