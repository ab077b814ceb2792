#!/usr/bin/env bash
# 2026-12-04e call 6: call 5's CUDA tests again on the same warm machine (call 5's run was cut by its
# 170 s timeout at ~99 % with no failure), with a longer timeout and the slowest durations.
# Run from the repository root on the device after call 5: bash <this> $OUT
. benchmarks/device_env.sh 16; ls torchquant/*.so; R=$OUT/r; mkdir -p $R
[ -f torchquant/_C_sm90a.so ] || { echo building; timeout 250 $PY setup.py build_ext --inplace > $R/build.log 2>&1; echo build rc=$?; }
t1=$(date +%s)
timeout -k 5 330 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_fp8_wgmma_cuda.py \
  tests/test_int8_cuda.py tests/test_int8_wgmma_cuda.py tests/test_pdl_cuda.py tests/test_nn.py tests/test_nvfp4_cuda.py \
  tests/test_nvfp4_wgmma_cuda.py tests/test_sparse24.py tests/test_sparse24_wgmma_cuda.py --durations=15 > $R/tests.log 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" $R/tests.log | head; tail -n 22 $R/tests.log | cut -c1-200
cd $OUT && tar czf r.tgz r && rm -rf r
