#!/usr/bin/env bash
# Session 2026-12-03c call 3: the new int8 dispatch (wgmma at M = 17..32 where N >= 6144, and at
# M = 13..16 where K >= 8192 and N x K >= 10240 x 8192; A boxes cut to M): int8 tests, then
# int8_matmul auto against bf16 cuBLAS on the 17 sweep shapes at decode M.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu timeout 220 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout -k 5 90 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_int8_wgmma_cuda.py tests/test_int8_cuda.py > "$R/tests.log" 2>&1
echo "int8 tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -5; tail -n 1 "$R/tests.log"
SH=4096x4096,1024x4096,6144x4096,14336x4096,28672x4096,4096x14336,8192x8192,1024x8192,10240x8192,28672x8192,57344x8192,8192x28672,768x2048,1536x2048,2048x768,128256x4096,2048x2048
t0=$(date +%s)
PYTHONPATH=. timeout 120 $PY benchmarks/micro/env_ab.py --op int8 --var path --values auto,auto \
  --shapes $SH --ms 1,8,13,16,17,24,32 --dense --out "$R/auto.csv" > "$R/auto.log" 2>&1
echo "auto rc=$? $(( $(date +%s) - t0 )) s"; grep "M=" "$R/auto.log"
t0=$(date +%s)
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
