#!/usr/bin/env bash
# 2026-12-04f call 4: the tree that lands (the wgmma GEMV as in calls 1-2, x loaded per stage;
# auto M = 5..32; QuantLinear nvfp4 M <= 32 on the op): full sm_90 build, the nvfp4 / QuantLinear
# / PDL / ops CUDA tests (call 3 ran every format's on the same tree with the x prefetch), the
# nvfp4 decode table (auto, bf16 and fp16) on the shapes beside cuBLAS, bench_e2e at
# M = 1 / 2 / 8, and the layer chain at M = 1..32.
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
timeout -k 5 150 $PY -m pytest -q --timeout=120 -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py \
  tests/test_nvfp4_wgmma_cuda.py tests/test_nn.py tests/test_pdl_cuda.py tests/test_ops.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
PYTHONPATH=. timeout 100 $PY benchmarks/bench_e2e.py --ms 1,2,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$?"; grep "fused" "$R/e2e.log" | grep -E "QuantLinear|bf16 F.linear" | sed 's/\[e2e\] Llama-3-8B //'
ab() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout "$to" $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"
}
for dt in bf16 fp16; do
  ab nvfp4_$dt 70 --op nvfp4 --path auto --act-dtype $dt --var path --values auto \
    --shapes 28672x8192,128256x4096,4096x4096 --ms 1,2,4,8,16 --dense
done
PYTHONPATH=. timeout 60 $PY benchmarks/micro/pdl_ab.py --formats nvfp4 --ms 1,4,8,16,32 \
  --var TORCHQUANT_NVFP4_WGMMA_MIN_M --modes auto --out "$R/chain.csv" > "$R/chain.log" 2>&1
echo "chain rc=$?"; grep "fused" "$R/chain.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
