#!/usr/bin/env bash
# 2026-12-04h call 2: bf16 x through the fp16 decode and mma of the nvfp4 x-resident kernel
# (kF16, TORCHQUANT_NVFP4_F16: unset = on, -1 = the bf16 loop as before). Build of nvfp4 alone;
# the nvfp4 CUDA tests and the nvfp4 PDL tests; compute-sanitizer memcheck of the x-resident
# kernel (fp16 loop, its bf16 fallback, the bf16 kernel); the op on six shapes at M = 1..4,
# auto / -1 in two rounds, with fp16 activations beside; the Llama-3-8B layer chain.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
export TORCHQUANT_ONLY_SOURCES=csrc/nvfp4/nvfp4_gemv.cu
t0=$(date +%s)
timeout 240 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -i "spill stores" "$R/build.log" | grep -v " 0 bytes spill" | head -3
t1=$(date +%s)
timeout -k 5 200 $PY -m pytest -q --timeout=150 -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py \
  > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
t1=$(date +%s)
timeout -k 5 100 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_pdl_cuda.py -k nvfp4 \
  > "$R/tests_pdl.log" 2>&1
echo "pdl tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_pdl.log" | head -6; tail -n 1 "$R/tests_pdl.log"
t1=$(date +%s)
PYTHONPATH=. timeout 150 compute-sanitizer --tool memcheck --print-limit 20 $PY benchmarks/micro/nvfp4_xres_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t1 )) s"; tail -n 3 "$R/memcheck.log"
ab() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout "$to" $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 )) s"; grep "M=" "$R/$name.log"
}
SH=28672x8192,128256x4096,28672x4096,4096x14336,6144x4096,4096x4096
ab f16 120 --op nvfp4 --path mma --act-dtype bf16 --var TORCHQUANT_NVFP4_F16 --values auto,-1,auto,-1 --shapes $SH --ms 1,2,3,4
ab fp16 60 --op nvfp4 --path mma --act-dtype fp16 --var path --values mma --shapes $SH --ms 1,2,3,4
PYTHONPATH=. timeout 100 $PY benchmarks/micro/pdl_ab.py --formats nvfp4 --ms 1,2,4 \
  --var TORCHQUANT_NVFP4_F16 --modes auto,-1,auto,-1 --out "$R/chain.csv" > "$R/chain.log" 2>&1
echo "chain rc=$?"; grep "fused" "$R/chain.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
