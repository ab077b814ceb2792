#!/usr/bin/env bash
# NOT RUN (written 2026-12-04h when no device was lent): the first call for the next session.
# Full sm_90 build of main; the CUDA tests of every format (the final test_gemv_mma_x_resident_f16
# and test_gemv_mma_f16_knob have not run on a GPU yet); memcheck of the x-resident kernel with
# F16=1 / -1 / 3; the nvfp4 x-resident op at M = 1..4 with F16 -1 (the default) / 1 / 3 (two rounds); the
# layer chain with the same three; bench_e2e at M = 1 / 2 / 8.
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
timeout -k 5 230 $PY -m pytest -q --timeout=120 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_fp8_wgmma_cuda.py \
  tests/test_int8_cuda.py tests/test_int8_wgmma_cuda.py tests/test_pdl_cuda.py tests/test_nn.py tests/test_nvfp4_cuda.py \
  tests/test_nvfp4_wgmma_cuda.py tests/test_sparse24.py tests/test_sparse24_wgmma_cuda.py tests/test_ops.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
PYTHONPATH=. timeout 120 compute-sanitizer --tool memcheck --print-limit 20 $PY benchmarks/micro/nvfp4_xres_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; tail -n 2 "$R/memcheck.log"
ab() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout "$to" $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"
}
ab f16 120 --op nvfp4 --path mma --act-dtype bf16 --var TORCHQUANT_NVFP4_F16 --values -1,1,3,-1,1,3 \
  --shapes 28672x8192,128256x4096,28672x4096,4096x14336,6144x4096,4096x4096 --ms 1,2,3,4
# the same with no x value below 2^-10, so no block falls back by chance: the fp16 loop itself
ab f16_clean 90 --op nvfp4 --path mma --act-dtype bf16 --var TORCHQUANT_NVFP4_F16 --values -1,1,3,-1,1,3 \
  --shapes 28672x8192,28672x4096,6144x4096,4096x4096 --ms 2,3,4 --x-min-abs 0.0009765625
PYTHONPATH=. timeout 100 $PY benchmarks/micro/pdl_ab.py --formats nvfp4 --ms 1,2,4 \
  --var TORCHQUANT_NVFP4_F16 --modes -1,1,3,-1,1,3 --out "$R/chain.csv" > "$R/chain.log" 2>&1
echo "chain rc=$?"; grep "fused" "$R/chain.log"
PYTHONPATH=. timeout 100 $PY benchmarks/bench_e2e.py --ms 1,2,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$?"; grep "fused" "$R/e2e.log" | grep -E "QuantLinear|bf16 F.linear" | sed 's/\[e2e\] Llama-3-8B //'
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
