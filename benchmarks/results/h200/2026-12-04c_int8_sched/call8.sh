#!/usr/bin/env bash
# 2026-12-04c call 8: the int8 2:4 dp4a GEMV (sparse24_int8_matmul "gemv", auto at M <= 2 on
# sm_90) with each output's product of scales loaded before the K loop (A, this tree) against
# after it (B: ab_old/ = sparse24_kernels.cuh of the commit before), two builds on one machine
# (benchmarks/micro/ab_builds.sh): the op at M = 1 / 2 and the fused Llama-3-8B layer chain;
# then the 2:4 tests on A. Run from the repository root with carry ["ab_old"]: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
t0=$(date +%s)
AB_SOURCES=csrc/sparse/sparse24.cu AB_ROUNDS=2 \
AB_CMDS="benchmarks/micro/env_ab.py --op sparse24_int8 --path auto --var path --values auto --shapes 28672x8192,14336x4096,6144x4096,4096x4096 --ms 1,2 --out $R/sp_{v}.csv;benchmarks/micro/pdl_ab.py --formats int8_sparse24 --ms 1,2 --modes auto --out $R/layer_{v}.csv" \
  timeout 300 bash benchmarks/micro/ab_builds.sh "$R" > "$R/ab.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep -E "rc=|builds:|M=" "$R/ab.log" | grep -v Warning | head -40
. benchmarks/device_env.sh 16
t1=$(date +%s)
timeout -k 5 100 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_sparse24.py -k "int8" > "$R/tests_sp24.log" 2>&1
echo "2:4 int8 tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_sp24.log" | head -8; tail -n 1 "$R/tests_sp24.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
