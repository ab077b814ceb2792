#!/usr/bin/env bash
# 2026-12-04d call 7: with the ring at 2 stages (this tree), is x through the ring (XR, the
# default at M <= 2 with K split >= 8) still faster? XR off (TORCHQUANT_FP8_XRING=-1) against the
# default, the op on the XR-eligible shapes and the fused Llama-3-8B layer chain; then the fp8
# CUDA tests. Build: fp8_block_gemv.cu only. Run from the repository root: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
t0=$(date +%s)
. benchmarks/device_env.sh 16
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
E="PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op fp8 --path auto"
S=4096x4096,2048x4096,4096x8192,1024x4096
for dt in fp16 bf16; do
  eval "$E --act-dtype $dt --var TORCHQUANT_FP8_XRING --values auto,-1,auto,-1 --shapes $S --ms 1,2,4 --out $R/xr_$dt.csv" 2>&1 | grep -v Warn
done
PYTHONPATH=. $PY benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,2,8 --var TORCHQUANT_FP8_XRING --modes auto,-1,auto,-1 --out $R/layer_xr.csv 2>&1 | grep -v Warn
t1=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests_fp8.log" 2>&1
echo "fp8 tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_fp8.log" | head -8; tail -n 1 "$R/tests_fp8.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
