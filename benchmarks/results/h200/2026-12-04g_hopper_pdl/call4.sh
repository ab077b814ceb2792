#!/usr/bin/env bash
# 2026-12-04g call 4: call 3 again with the staging walk division-free (a running row / group counter, a round ending at the last group; 105 registers instead of 128)
# (A, this tree) against 4 (B, ab_old/ = the previous nvfp4_kernels.cuh), same machine, two
# rounds: the op at M = 1..4 on the large and the Llama-3-8B layers, and the layer chain at
# M = 1 / 2 / 4; then the nvfp4 CUDA tests and the ring memcheck on A.
# Run from the repository root on the device (carry ab_old): bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
t0=$(date +%s)
AB_SOURCES=csrc/nvfp4/nvfp4_gemv.cu AB_ROUNDS=2 AB_CMDS="benchmarks/micro/env_ab.py --op nvfp4 --path auto --var path --values auto --shapes 28672x8192,128256x4096,28672x4096,4096x14336,6144x4096,4096x4096 --ms 1,2,3,4 --out $R/op_{v}.csv;benchmarks/micro/pdl_ab.py --formats nvfp4 --ms 1,2,4 --modes auto --out $R/chain_{v}.csv" \
  bash benchmarks/micro/ab_builds.sh "$R" > "$R/ab.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep -E "build|M=|fused" "$R/ab.log" | grep -v "^$" | head -80

. benchmarks/device_env.sh 16
t1=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=120 -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
PYTHONPATH=. timeout 120 compute-sanitizer --tool memcheck --print-limit 20 $PY benchmarks/micro/nvfp4_xres_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; tail -n 3 "$R/memcheck.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
