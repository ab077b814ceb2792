#!/usr/bin/env bash
# 2026-12-04d call 6: the fp8 ring kernel (x in registers) with 2 ring stages per warp (A, this
# tree: kMmaCpStages = 2) against 3 (B: ab_old/ = the call-5 tree, kMmaCpStages = 3), two builds on one
# machine: the op at M = 1 / 4 / 8, fp16 and bf16, and the fused Llama-3-8B layer chain.
# Run from the repository root on the device with carry ["ab_old"]: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
t0=$(date +%s)
S=4096x4096,6144x4096,14336x4096,28672x4096,4096x14336,28672x8192,128256x4096
AB_SOURCES=csrc/fp8/fp8_block_gemv.cu AB_ROUNDS=2 \
AB_CMDS="benchmarks/micro/env_ab.py --op fp8 --path mma --act-dtype fp16 --var TORCHQUANT_FP8_KSPLIT --values auto --shapes $S --ms 1,4,8,16 --out $R/f16_{v}.csv;benchmarks/micro/env_ab.py --op fp8 --path mma --act-dtype bf16 --var TORCHQUANT_FP8_KSPLIT --values auto --shapes $S --ms 1,8 --out $R/b16_{v}.csv;benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,8 --modes auto --out $R/layer_{v}.csv" \
  timeout 480 bash benchmarks/micro/ab_builds.sh "$R" > "$R/ab.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"
python3 benchmarks/micro/ab_summary.py "$R/ab.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
