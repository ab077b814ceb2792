#!/usr/bin/env bash
# 2026-12-04e call 7: with the ring copies now without the L2 hint, the fp8 ring GEMV's depth again:
# A = this tree with kMmaCpStages = 3, B = ab_old/ (main: 2 stages), two builds on one machine, the op
# at M = 1 / 4 / 8 (fp16) and 1 / 8 (bf16) and the fused layer chain; then the fp8 CUDA tests on A.
# Run from the repository root on the device with carry ["ab_old"]: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
t0=$(date +%s)
S=4096x4096,28672x8192,128256x4096
AB_SOURCES=csrc/fp8/fp8_block_gemv.cu AB_ROUNDS=2 \
AB_CMDS="benchmarks/micro/env_ab.py --op fp8 --path mma --act-dtype fp16 --var TORCHQUANT_FP8_KSPLIT --values auto --shapes $S --ms 1,4,8 --out $R/f16_{v}.csv;benchmarks/micro/env_ab.py --op fp8 --path mma --act-dtype bf16 --var TORCHQUANT_FP8_KSPLIT --values auto --shapes $S --ms 1,8 --out $R/b16_{v}.csv;benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,8 --modes auto --out $R/layer_{v}.csv" \
  timeout 200 bash benchmarks/micro/ab_builds.sh "$R" > "$R/ab.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"
python3 benchmarks/micro/ab_summary.py "$R/ab.log"
. benchmarks/device_env.sh 16
t1=$(date +%s)
timeout -k 5 80 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests.log" 2>&1
echo "fp8 tests (A) rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -5; tail -n 1 "$R/tests.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
