#!/usr/bin/env bash
# Session 2026-12-03c call 2: A boxes cut to round_up(M, 8) rows now the default of the int8 wgmma
# GEMM. int8 tests + memcheck of the A-box tests; then gemv against wgmma at M = 8..24 on the
# 17 sweep shapes (where the dispatch line between them should now sit).
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu timeout 220 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
SH=4096x4096,1024x4096,6144x4096,14336x4096,28672x4096,4096x14336,8192x8192,1024x8192,10240x8192,28672x8192,57344x8192,8192x28672,768x2048,1536x2048,2048x768,128256x4096,2048x2048
t0=$(date +%s)
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op int8 --var path --values gemv,wgmma,gemv,wgmma \
  --shapes $SH --ms 8,12,13,16,17,20,24 --dense --out "$R/path_sweep.csv" > "$R/path_sweep.log" 2>&1
echo "path sweep rc=$? $(( $(date +%s) - t0 )) s"; grep "M=" "$R/path_sweep.log"
t0=$(date +%s)
timeout -k 5 90 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_int8_wgmma_cuda.py tests/test_int8_cuda.py > "$R/tests.log" 2>&1
echo "int8 tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -5; tail -n 1 "$R/tests.log"
t0=$(date +%s)
timeout -k 10 100 compute-sanitizer --tool memcheck --error-exitcode 9 $PY -m pytest -q -p no:cacheprovider \
  tests/test_int8_wgmma_cuda.py -k "abox or cluster_ksplit_bit_exact" > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? (9 = errors, 124 = time limit) $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|passed|failed" "$R/memcheck.log" | tail -3
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
