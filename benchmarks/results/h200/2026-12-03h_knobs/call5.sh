#!/usr/bin/env bash
# 2026-12-03h call 5: fp8_block_gemv with x through the ring by default only where K is split over
# 8+ warps (TORCHQUANT_FP8_XRING unset = 5, the narrow rule; -1 off): the op alone on small layers
# and the Llama-3-8B layer chain (where the wider rule, 1, lost in 2026-12-02h and in call 2),
# then the fp8 CUDA tests and the fp8 PDL tests on this build.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu timeout 200 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
ab() { local name=$1; shift; PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
ab xr16 --op fp8 --act-dtype fp16 --var TORCHQUANT_FP8_XRING --path auto --values auto,-1,auto,-1 \
  --shapes 1024x4096,2048x4096,4096x4096,4096x8192,6144x4096,4096x14336 --ms 1,8,16
ab xrb --op fp8 --act-dtype bf16 --var TORCHQUANT_FP8_XRING --path auto --values auto,-1,auto,-1 \
  --shapes 4096x4096,4096x8192 --ms 1,8
for dt in bf16 fp16; do
  PYTHONPATH=. timeout 60 $PY benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,8 --var TORCHQUANT_FP8_XRING --modes auto,-1,auto,-1 --dtype $dt --out "$R/layer_$dt.csv" > "$R/layer_$dt.log" 2>&1
  echo "layer $dt rc=$?"; grep fused "$R/layer_$dt.log"
done
t1=$(date +%s)
timeout -k 5 110 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests_fp8.log" 2>&1
echo "fp8 tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_fp8.log" | head -12; tail -n 1 "$R/tests_fp8.log"
timeout -k 5 50 $PY -m pytest -q --timeout=40 -p no:cacheprovider -n 8 tests/test_pdl_cuda.py -k fp8 > "$R/tests_pdl_fp8.log" 2>&1
echo "pdl fp8 tests rc=$?"; grep -E "^FAILED|^ERROR" "$R/tests_pdl_fp8.log" | head -6; tail -n 1 "$R/tests_pdl_fp8.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
