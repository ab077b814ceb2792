#!/usr/bin/env bash
# 2026-12-04d call 2: the fp8 ring kernel with its 8-row tile's copy and read state pinned in
# registers (A, this tree) against main (B: ab_old/ = fp8_kernels.cuh of 41d2b9f), two builds
# on one machine (benchmarks/micro/ab_builds.sh): the op at M = 1 / 2 / 4 / 8, fp16 and bf16,
# and the fused Llama-3-8B layer chain; then the fp8 CUDA tests on A.
# Run from the repository root on the device with carry ["ab_old"]: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
t0=$(date +%s)
S=4096x4096,6144x4096,14336x4096,28672x4096,4096x14336,28672x8192,128256x4096
AB_SOURCES=csrc/fp8/fp8_block_gemv.cu AB_ROUNDS=2 \
AB_CMDS="benchmarks/micro/env_ab.py --op fp8 --path mma --act-dtype fp16 --var TORCHQUANT_FP8_KSPLIT --values auto --shapes $S --ms 1,2,4,8 --out $R/f16_{v}.csv;benchmarks/micro/env_ab.py --op fp8 --path mma --act-dtype bf16 --var TORCHQUANT_FP8_KSPLIT --values auto --shapes $S --ms 1,8 --out $R/b16_{v}.csv;benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,8 --modes auto --out $R/layer_{v}.csv" \
  timeout 480 bash benchmarks/micro/ab_builds.sh "$R" > "$R/ab.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep -E "rc=|builds:|M=|fp8" "$R/ab.log" | grep -v Warning | head -90
. benchmarks/device_env.sh 16
t1=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests_fp8.log" 2>&1
echo "fp8 tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_fp8.log" | head -8; tail -n 1 "$R/tests_fp8.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
