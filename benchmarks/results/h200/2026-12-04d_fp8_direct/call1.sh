#!/usr/bin/env bash
# 2026-12-04d call 1: the fp8 register-prefetch mma kernel (block-interleaved K split, the int8
# GEMV's load structure) against the cp.async ring kernel at M <= 8, and its K split swept.
# Build: fp8_block_gemv.cu only. Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
t0=$(date +%s)
. benchmarks/device_env.sh 16
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
E="PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op fp8 --path mma"
S=28672x8192,128256x4096,14336x4096,4096x4096
for dt in fp16 bf16; do
  eval "$E --act-dtype $dt --var TORCHQUANT_FP8_REG_KERNEL --values auto,1,auto,1 --shapes $S --ms 1,4,8 --out $R/reg_$dt.csv" 2>&1 | grep -v Warn
done
eval "$E --act-dtype fp16 --env TORCHQUANT_FP8_REG_KERNEL=1 --var TORCHQUANT_FP8_KSPLIT --values auto,2,4,8,16 --shapes 28672x8192,128256x4096 --ms 1,8 --out $R/ks_fp16.csv" 2>&1 | grep -v Warn
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
