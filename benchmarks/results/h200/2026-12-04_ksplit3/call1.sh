#!/usr/bin/env bash
# 2026-12-04 call 1: the 2:4 wgmma decode tile with its K split over a cluster of THREE CTAs
# where the doubling rule stops at two (17..33 feature tiles: the 4096-feature layers), the change
# prepared in 2026-12-03i (commit e70d389) and run here on the working tree that re-applies it.
# A/B in one process (TORCHQUANT_SP24_KSPLIT3 unset = three ranks, -1 = two), bf16 and int8
# kinds; the layer chain with and without; then the sparse 2:4 CUDA tests (ks = 3 forced among them).
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/sparse/sparse24.cu,csrc/sparse/sparse24_gemm_sm90a.cu,csrc/int8/int8_matmul.cu \
  timeout 170 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
ab() { local name=$1; shift; PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
ab k3_bf16 --op sparse24 --path auto --var TORCHQUANT_SP24_KSPLIT3 --values auto,-1,auto,-1 \
  --shapes 4096x14336,4096x4096,6144x4096 --ms 1,2,8,16 --dense
ab k3_i8 --op sparse24_int8 --path auto --var TORCHQUANT_SP24_KSPLIT3 --values auto,-1,auto,-1 \
  --shapes 4096x14336,4096x4096,6144x4096 --ms 1,8,16
for f in sparse24 int8_sparse24; do
  PYTHONPATH=. timeout 90 $PY benchmarks/micro/pdl_ab.py --formats $f --ms 1,8 \
    --var TORCHQUANT_SP24_KSPLIT3 --modes auto,-1,auto,-1 --out "$R/layer_$f.csv" > "$R/layer_$f.log" 2>&1
  echo "layer $f rc=$?"; tail -n 10 "$R/layer_$f.log"
done
timeout -k 3 150 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 8 tests/test_sparse24_wgmma_cuda.py \
  > "$R/tests_wgmma.log" 2>&1
echo "wgmma tests rc=$?"; grep -E "^FAILED|^ERROR" "$R/tests_wgmma.log" | head -5; tail -n 1 "$R/tests_wgmma.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
