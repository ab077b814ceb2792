#!/usr/bin/env bash
# Session 2026-12-03 call 3: the regrouped 16-byte epilogue stores in every wgmma GEMM (int8,
# 2:4 int8 / bf16, fp8 / nvfp4 dequantizing), knob TORCHQUANT_WGMMA_VEC=0 for the old stores:
# same-build A/B, the wgmma test files, memcheck of the knob and identity tests.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
$PY setup.py build_ext --inplace > "$R/build.log" 2>&1; echo "build rc=$? $(( $(date +%s) - t0 )) s"
grep -ci "spill stores" "$R/build.log" >/dev/null; grep -h "bytes spill" "$R/build.log" | grep -v " 0 bytes spill stores, 0 bytes spill loads" | head -3
SH=28672x8192,14336x4096,4096x14336,4096x4096,2048x768,768x2048
for op in sparse24_int8 sparse24 int8; do
  t0=$(date +%s)
  PYTHONPATH=. timeout 100 $PY benchmarks/micro/env_ab.py --op $op --path wgmma --var TORCHQUANT_WGMMA_VEC \
    --values auto,0,auto,0 --shapes $SH --ms 512,2048 --out "$R/vec_$op.csv" > "$R/vec_$op.log" 2>&1
  echo "vec $op rc=$? $(( $(date +%s) - t0 )) s"; grep "M=" "$R/vec_$op.log"
done
for f in fp8 nvfp4; do
  t0=$(date +%s)
  PYTHONPATH=. timeout 120 $PY benchmarks/micro/dq_wgmma_ab.py --format $f --shapes 28672x8192,4096x14336,4096x4096 \
    --ms 64,512,2048 --tile-max-m 0 --gemv-max-m 0 --knob TORCHQUANT_WGMMA_VEC=0 --out "$R/vec_dq_$f.csv" > "$R/vec_dq_$f.log" 2>&1
  echo "vec dq $f rc=$? $(( $(date +%s) - t0 )) s"; grep "M=" "$R/vec_dq_$f.log"
done
t0=$(date +%s)
timeout -k 10 200 $PY -m pytest -q --timeout=150 -p no:cacheprovider -n 16 tests/test_int8_wgmma_cuda.py \
  tests/test_sparse24_wgmma_cuda.py tests/test_fp8_wgmma_cuda.py tests/test_nvfp4_wgmma_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -20; tail -n 1 "$R/tests.log"
t0=$(date +%s)
timeout -k 10 150 compute-sanitizer --tool memcheck --error-exitcode 9 $PY -m pytest -q -p no:cacheprovider \
  tests/test_int8_wgmma_cuda.py tests/test_sparse24_wgmma_cuda.py tests/test_fp8_wgmma_cuda.py tests/test_nvfp4_wgmma_cuda.py \
  -k "vec_store_knob or identity" > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? (9 = errors, 124 = time limit) $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|passed|failed" "$R/memcheck.log" | tail -3
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
