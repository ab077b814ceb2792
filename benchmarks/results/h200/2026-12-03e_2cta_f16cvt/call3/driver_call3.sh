#!/usr/bin/env bash
# Session 2026-12-03e call 3: the prepared fp8 experiment (branch wip/fp8-f16-cvt): with fp16
# activations on sm_89+ the mma GEMV decodes e4m3 with cvt.rn.f16x2.e4m3x2 in natural byte
# pairs. Same-machine A/B, A = the branch's fp8_kernels.cuh, B = main's; fp16 activations (and
# bf16 on one shape: its SASS is unchanged); then the fp8 GPU tests on build A.
set -uo pipefail
OUT=${1:?}
AB_SOURCES=csrc/fp8/fp8_block_gemv.cu \
AB_CMDS="benchmarks/micro/env_ab.py --op fp8 --act-dtype fp16 --var path --values auto --ms 1,4,8,16 --shapes 28672x8192,128256x4096,14336x4096,4096x4096 --dense --out \$OUT/f16_{v}.csv;benchmarks/micro/env_ab.py --op fp8 --var path --values auto --ms 1,16 --shapes 28672x8192 --out \$OUT/bf16_{v}.csv" \
  timeout 200 bash benchmarks/micro/ab_builds.sh "$OUT" > "$OUT/ab.log" 2>&1
echo "ab rc=$?"
grep -E "build|M=" "$OUT/ab.log"
. benchmarks/device_env.sh 16
timeout -k 5 80 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$OUT/tests_fp8.log" 2>&1
echo "fp8 tests rc=$?"; grep -E "^FAILED|^ERROR" "$OUT/tests_fp8.log" | head -5; tail -n 1 "$OUT/tests_fp8.log"
