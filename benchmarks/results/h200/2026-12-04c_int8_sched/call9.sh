#!/usr/bin/env bash
# 2026-12-04c call 9: call 8's A/B again, with int8_matmul.cu in both builds (call 8's sparse-only
# builds had no CUDA quantize_int8, so its timings failed; its tests ran). The int8 2:4 dp4a GEMV
# with the product of scales loaded before the K loop (A) / after (B, ab_old/): the op at M = 1 / 2
# and the fused layer chain at M = 1. Run with carry ["ab_old"]: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
t0=$(date +%s)
AB_SOURCES=csrc/sparse/sparse24.cu,csrc/int8/int8_matmul.cu AB_ROUNDS=2 \
AB_CMDS="benchmarks/micro/env_ab.py --op sparse24_int8 --path auto --var path --values auto --shapes 28672x8192,14336x4096,4096x4096 --ms 1,2 --out $R/sp_{v}.csv;benchmarks/micro/pdl_ab.py --formats int8_sparse24 --ms 1 --modes auto --out $R/layer_{v}.csv" \
  timeout 190 bash benchmarks/micro/ab_builds.sh "$R" > "$R/ab.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep -E "rc=|builds:|M=|Error" "$R/ab.log" | grep -v Warning | head -40
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
