#!/usr/bin/env bash
# 2026-12-04e call 4: call 3's question for the nvfp4 GEMV (its weight ring uses the same copies)
# and the int8 GEMV (direct loads with the hint): A = this tree (.L2::256B on every weight
# stream), B = ab_old/csrc/common/ldg.h with TORCHQUANT_L2_PREFETCH 0 (no hint anywhere in those
# two sources). The ops at M = 1 / 4 / 8 and the fused Llama-3-8B layer chain, two builds, one machine.
# Run from the repository root on the device with carry ["ab_old"]: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
t0=$(date +%s)
S=4096x4096,14336x4096,28672x8192,128256x4096
AB_SOURCES=csrc/nvfp4/nvfp4_gemv.cu,csrc/int8/int8_matmul.cu AB_ROUNDS=2 \
AB_CMDS="benchmarks/micro/env_ab.py --op nvfp4 --path auto --act-dtype bf16 --var TORCHQUANT_NVFP4_KS --values auto --shapes $S --ms 1,4,8 --out $R/nv_{v}.csv;benchmarks/micro/env_ab.py --op int8 --path auto --var TORCHQUANT_INT8_GEMV_DEEP --values auto --shapes $S --ms 1,8 --out $R/i8_{v}.csv;benchmarks/micro/pdl_ab.py --formats nvfp4,int8 --ms 1,8 --modes auto --out $R/layer_{v}.csv" \
  timeout 400 bash benchmarks/micro/ab_builds.sh "$R" > "$R/ab.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"
python3 benchmarks/micro/ab_summary.py "$R/ab.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
