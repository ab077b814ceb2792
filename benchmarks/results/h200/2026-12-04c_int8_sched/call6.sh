#!/usr/bin/env bash
# 2026-12-04c call 6: the nvfp4 mma GEMV with its global scale loaded before the K loop (A, this
# tree) against the load after the K-split reduction (B: ab_old/ = nvfp4_kernels.cuh of 6b61ba2),
# two builds on one machine (benchmarks/micro/ab_builds.sh), the op at M = 1 / 2 / 8 on the
# decode shapes and the fused Llama-3-8B layer chain; then the nvfp4 CUDA tests on A.
# Run from the repository root on the device with carry ["ab_old"]: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
t0=$(date +%s)
AB_SOURCES=csrc/nvfp4/nvfp4_gemv.cu AB_ROUNDS=2 \
AB_CMDS="benchmarks/micro/env_ab.py --op nvfp4 --path auto --var TORCHQUANT_NVFP4_KS --values auto --shapes 4096x4096,6144x4096,14336x4096,28672x8192,128256x4096 --ms 1,2,8 --out $R/nv_{v}.csv;benchmarks/micro/pdl_ab.py --formats nvfp4 --ms 1,8 --modes auto --out $R/layer_{v}.csv" \
  timeout 420 bash benchmarks/micro/ab_builds.sh "$R" > "$R/ab.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep -E "rc=|builds:|M=|nvfp4" "$R/ab.log" | grep -v Warning | head -60
. benchmarks/device_env.sh 16
t1=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py > "$R/tests_nvfp4.log" 2>&1
echo "nvfp4 tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_nvfp4.log" | head -8; tail -n 1 "$R/tests_nvfp4.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
