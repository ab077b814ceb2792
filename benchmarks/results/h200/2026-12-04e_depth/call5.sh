#!/usr/bin/env bash
# 2026-12-04e call 5: the tree that lands (weight rings without the L2 prefetch hint, the fp8
# wgmma GEMV's 3-stage rule): full sm_90 build, the CUDA tests of every format, bench_e2e at
# M = 1 / 2 / 8, the fp8_block decode (path auto, fp16 and bf16), nvfp4 (bf16) and int8 rows on the
# issue's shapes beside cuBLAS.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
timeout 250 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -i "spill stores" "$R/build.log" | grep -v " 0 bytes spill" | head -3
t1=$(date +%s)
timeout -k 5 170 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_fp8_wgmma_cuda.py \
  tests/test_int8_cuda.py tests/test_int8_wgmma_cuda.py tests/test_pdl_cuda.py tests/test_nn.py tests/test_nvfp4_cuda.py \
  tests/test_nvfp4_wgmma_cuda.py tests/test_sparse24.py tests/test_sparse24_wgmma_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
PYTHONPATH=. timeout 100 $PY benchmarks/bench_e2e.py --ms 1,2,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$?"; grep "fused" "$R/e2e.log" | grep -E "QuantLinear|bf16 F.linear" | sed 's/\[e2e\] Llama-3-8B //'
ab() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout "$to" $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"
}
for dt in fp16 bf16; do
  ab fp8_$dt 75 --op fp8 --path auto --act-dtype $dt --var path --values auto \
    --shapes 28672x8192,128256x4096,4096x4096 --ms 1,2,4,8,16 --dense
done
ab nvfp4_bf16 50 --op nvfp4 --path auto --act-dtype bf16 --var path --values auto \
  --shapes 28672x8192,128256x4096,4096x4096 --ms 1,8,16
ab int8 30 --op int8 --path auto --var path --values auto --shapes 28672x8192 --ms 1,8
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
