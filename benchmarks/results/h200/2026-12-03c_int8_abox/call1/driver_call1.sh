#!/usr/bin/env bash
# Session 2026-12-03c call 1: the int8 wgmma GEMM with A boxes cut to round_up(M, 8) rows
# (TORCHQUANT_INT8_WGMMA_ABOX=1, branch wip/int8-wgmma-abox): bit-exact tests, memcheck,
# same-process A/B of the knob, then gemv against wgmma+abox at decode M.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu timeout 220 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout -k 5 60 $PY -m pytest -q --timeout=40 -p no:cacheprovider -n 16 tests/test_int8_wgmma_cuda.py -k abox > "$R/tests.log" 2>&1
echo "abox tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -5; tail -n 1 "$R/tests.log"
t0=$(date +%s)
PYTHONPATH=. timeout 110 $PY benchmarks/micro/env_ab.py --op int8 --path wgmma --var TORCHQUANT_INT8_WGMMA_ABOX \
  --values auto,1,auto,1 --shapes 28672x8192,128256x4096,14336x4096 --ms 1,8,16,17,24,32 --out "$R/abox_ab.csv" > "$R/abox_ab.log" 2>&1
echo "abox ab rc=$? $(( $(date +%s) - t0 )) s"; grep "M=" "$R/abox_ab.log"
t0=$(date +%s)
TORCHQUANT_INT8_WGMMA_ABOX=1 PYTHONPATH=. timeout 100 $PY benchmarks/micro/env_ab.py --op int8 --var path \
  --values gemv,wgmma,gemv,wgmma --shapes 28672x8192,128256x4096,14336x4096,57344x8192,4096x4096 --ms 4,8,12,16 --dense \
  --out "$R/path_ab.csv" > "$R/path_ab.log" 2>&1
echo "path ab rc=$? $(( $(date +%s) - t0 )) s"; grep "M=" "$R/path_ab.log"
t0=$(date +%s)
timeout -k 10 80 compute-sanitizer --tool memcheck --error-exitcode 9 $PY -m pytest -q -p no:cacheprovider \
  tests/test_int8_wgmma_cuda.py -k "abox and (64x128c1 or 128x256c1)" > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? (9 = errors, 124 = time limit) $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|passed|failed" "$R/memcheck.log" | tail -3
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
