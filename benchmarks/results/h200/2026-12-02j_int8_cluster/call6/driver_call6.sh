#!/usr/bin/env bash
# Session 2026-12-02j call 6: int8_matmul at M = 17..32 on sm_90: auto (now the wgmma GEMM) against
# the gemv forced, same machine, every sweep shape; int8 tests.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  $PY setup.py build_ext --inplace > "$R/build.log" 2>&1; echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout -k 10 120 $PY -m pytest -q --timeout=100 -p no:cacheprovider -n 16 tests/test_int8_cuda.py tests/test_int8_wgmma_cuda.py \
  > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -10; tail -n 1 "$R/tests.log"
for path in auto gemv; do
  t0=$(date +%s)
  PYTHONPATH=. timeout 80 $PY benchmarks/micro/env_ab.py --op int8 --path $path --var TORCHQUANT_PDL --values auto \
    --shapes 4096x4096,1024x4096,6144x4096,14336x4096,28672x4096,4096x14336,8192x8192,1024x8192,10240x8192,28672x8192,57344x8192,8192x28672,768x2048,1536x2048,2048x768,128256x4096,2048x2048 --ms 17,24,32 $( [ $path = auto ] && echo --dense ) --out "$R/m17_$path.csv" > "$R/m17_$path.log" 2>&1
  echo "$path rc=$? $(( $(date +%s) - t0 )) s"
done
paste -d' ' <(grep "^int8" "$R/m17_auto.log" | sed 's/auto:/wgmma:/') <(grep "^int8" "$R/m17_gemv.log" | sed 's/.*auto:/gemv:/')
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
