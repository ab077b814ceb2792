#!/usr/bin/env bash
# Session 2026-12-02j call 2: cluster K split (DSMEM reduction) for the 64-row int8 wgmma tiles:
# tests, memcheck, and the forced-config sweep against the current rule and bf16 cuBLAS.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  $PY setup.py build_ext --inplace > "$R/build.log" 2>&1; echo "build rc=$? $(( $(date +%s) - t0 )) s"
grep -E "C75|warning|error" "$R/build.log" | head -5
t0=$(date +%s)
timeout -k 10 200 $PY -m pytest -q --timeout=150 -p no:cacheprovider -n 16 tests/test_int8_wgmma_cuda.py \
  > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -20; tail -n 2 "$R/tests.log"
t0=$(date +%s)
timeout -k 10 150 compute-sanitizer --tool memcheck --error-exitcode 9 $PY -m pytest -q -p no:cacheprovider \
  tests/test_int8_wgmma_cuda.py -k "cluster_ksplit and not 2048" > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? (9 = errors, 124 = time limit) $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|passed|failed" "$R/memcheck.log" | tail -3
t0=$(date +%s)
PYTHONPATH=. timeout 240 $PY benchmarks/micro/env_ab.py --op int8 --path wgmma --var TORCHQUANT_INT8_WGMMA_TILE \
  --values auto,64x64c1,64x64k2,64x64k4,64x64k8,64x128c1,64x128k2,64x128k4,64x128k8 \
  --shapes 4096x4096,1024x8192,1024x4096,6144x4096,4096x14336,768x2048,2048x2048,14336x4096,1536x2048 \
  --ms 33,64,128,256 --dense --out "$R/ksplit_ab.csv" > "$R/ksplit_ab.log" 2>&1
echo "ksplit ab rc=$? $(( $(date +%s) - t0 )) s"; tail -c 8500 "$R/ksplit_ab.log" | sed -e 's/64x64/a/g; s/64x128/b/g'
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
