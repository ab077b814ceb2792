#!/usr/bin/env bash
# 2026-12-04g call 5: the tree that lands. Full sm_90 build, the CUDA tests of every format,
# bench_e2e at M = 1 / 2 / 8, the nvfp4 decode table (auto, bf16) beside cuBLAS, and one knob
# measurement for the next session: 28672x8192 M = 3 / 4 with the K split across two blocks
# (TORCHQUANT_NVFP4_SPLITK=2, KS = 1), where the x-resident block now runs alone on its SM.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
timeout 250 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -i "spill stores\|C75" "$R/build.log" | grep -v " 0 bytes spill" | head -3
t1=$(date +%s)
timeout -k 5 230 $PY -m pytest -q --timeout=120 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_fp8_wgmma_cuda.py \
  tests/test_int8_cuda.py tests/test_int8_wgmma_cuda.py tests/test_pdl_cuda.py tests/test_nn.py tests/test_nvfp4_cuda.py \
  tests/test_nvfp4_wgmma_cuda.py tests/test_sparse24.py tests/test_sparse24_wgmma_cuda.py tests/test_ops.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
PYTHONPATH=. timeout 100 $PY benchmarks/bench_e2e.py --ms 1,2,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$?"; grep "fused" "$R/e2e.log" | grep -E "QuantLinear|bf16 F.linear" | sed 's/\[e2e\] Llama-3-8B //'
ab() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout "$to" $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"
}
ab nvfp4_bf16 60 --op nvfp4 --path auto --act-dtype bf16 --var path --values auto \
  --shapes 28672x8192,128256x4096,4096x4096 --ms 1,2,4,8,16 --dense
ab split34 40 --op nvfp4 --path auto --act-dtype bf16 --var TORCHQUANT_NVFP4_SPLITK --values auto,2 \
  --env TORCHQUANT_NVFP4_KS=1 --shapes 28672x8192 --ms 3,4
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
