#!/usr/bin/env bash
# 2026-12-03i call 6: the tests added for this session's two sweep knobs
# (test_gemv_auto_m5_threshold_knob in test_fp8_cuda.py, the SMEM_MIN check in
# test_gemv_mma_spread_same_bits of test_nvfp4_cuda.py), then the fp8 and nvfp4 CUDA tests.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu,csrc/nvfp4/nvfp4_gemv.cu \
  timeout 250 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
timeout -k 5 60 $PY -m pytest -q --timeout=50 -p no:cacheprovider -n 8 tests/test_fp8_cuda.py tests/test_nvfp4_cuda.py \
  -k "m5_threshold or spread_same_bits" > "$R/tests_new.log" 2>&1
echo "new tests rc=$?"; grep -E "^FAILED|^ERROR" "$R/tests_new.log" | head; tail -n 1 "$R/tests_new.log"
t1=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_nvfp4_cuda.py \
  > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head; tail -n 1 "$R/tests.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
