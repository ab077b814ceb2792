#!/usr/bin/env bash
# Session 2026-12-02i call 6: the 128-row rule's 128x128 branch only when its grid fits one wave
# (tests; forced tiles at M = 1024 / 2048 on the small shapes where it changes the choice).
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  $PY setup.py build_ext --inplace > "$R/build.log" 2>&1; echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
PYTHONPATH=. timeout 100 $PY benchmarks/micro/env_ab.py --op int8 --path wgmma --var TORCHQUANT_INT8_WGMMA_TILE \
  --values auto,128x128c1,128x256c1,128x256c2,64x128c1 --shapes 2048x768,1536x2048,768x2048,2048x2048,2048x4096,1536x4096 \
  --ms 1024,2048 --dense --out "$R/i8big.csv" > "$R/i8big.log" 2>&1
echo "sweep rc=$? $(( $(date +%s) - t0 )) s"; grep "^int8 " "$R/i8big.log"
t0=$(date +%s)
timeout -k 10 100 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_int8_wgmma_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head; tail -n 1 "$R/tests.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
