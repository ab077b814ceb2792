#!/usr/bin/env bash
# 2026-12-04e call 3: the fp8 ring kernel (2 stages) with the .L2::256B prefetch hint on its weight
# copies (A, this tree) against no hint (B: ab_old/csrc/common/ldg.h with TORCHQUANT_L2_PREFETCH 0),
# two builds on one machine: the op at M = 1 / 4 / 8 (fp16) and 1 / 8 (bf16), and the fused
# Llama-3-8B layer chain.
# Run from the repository root on the device with carry ["ab_old"]: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
t0=$(date +%s)
S=4096x4096,14336x4096,28672x8192,128256x4096
AB_SOURCES=csrc/fp8/fp8_block_gemv.cu AB_ROUNDS=2 \
AB_CMDS="benchmarks/micro/env_ab.py --op fp8 --path mma --act-dtype fp16 --var TORCHQUANT_FP8_KSPLIT --values auto --shapes $S --ms 1,4,8 --out $R/f16_{v}.csv;benchmarks/micro/env_ab.py --op fp8 --path mma --act-dtype bf16 --var TORCHQUANT_FP8_KSPLIT --values auto --shapes $S --ms 1,8 --out $R/b16_{v}.csv;benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,8 --modes auto --out $R/layer_{v}.csv" \
  timeout 400 bash benchmarks/micro/ab_builds.sh "$R" > "$R/ab.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"
python3 benchmarks/micro/ab_summary.py "$R/ab.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
