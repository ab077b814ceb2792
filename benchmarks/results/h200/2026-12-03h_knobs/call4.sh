#!/usr/bin/env bash
# 2026-12-03h call 4: A/B of two builds of nvfp4_gemv.cu (benchmarks/micro/ab_builds.sh; A = this
# tree: the double-buffered mma kernel prefetches chunk c + 1's x into L1 a chunk ahead of its
# loads; B = ab_old/: without), the op at M = 5..16 on the Llama-3-8B / 70B shapes and the fused
# Llama-3-8B layer chain; then the nvfp4 CUDA tests (and the nvfp4 PDL tests) on build A.
# Run from the repository root on the device with carry ["ab_old"]: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
SH=28672x8192,28672x4096,14336x4096,4096x14336,6144x4096,4096x4096,128256x4096
AB_SOURCES=csrc/nvfp4/nvfp4_gemv.cu \
AB_CMDS="benchmarks/micro/env_ab.py --op nvfp4 --var path --values auto --shapes $SH --ms 1,5,8,12,16 --out $R/nv_{v}.csv;benchmarks/micro/env_ab.py --op nvfp4 --act-dtype fp16 --var path --values auto --shapes 28672x4096,4096x14336 --ms 8,16 --out $R/nv16_{v}.csv;benchmarks/micro/pdl_ab.py --formats nvfp4 --ms 1,8,16 --modes auto --out $R/layer_{v}.csv" \
  timeout 400 bash benchmarks/micro/ab_builds.sh "$R" > "$R/ab.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep -E "build|M=|fused" "$R/ab.log"
. benchmarks/device_env.sh 16
t1=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py > "$R/tests_nvfp4.log" 2>&1
echo "nvfp4 tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_nvfp4.log" | head -12; tail -n 1 "$R/tests_nvfp4.log"
timeout -k 5 60 $PY -m pytest -q --timeout=50 -p no:cacheprovider -n 8 tests/test_pdl_cuda.py -k nvfp4 > "$R/tests_pdl_nvfp4.log" 2>&1
echo "pdl nvfp4 tests rc=$?"; grep -E "^FAILED|^ERROR" "$R/tests_pdl_nvfp4.log" | head -6; tail -n 1 "$R/tests_pdl_nvfp4.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
