#!/usr/bin/env bash
# Session 2026-12-02k call 1: int8_matmul at M = 1..16 on the five shapes where the gemv splits K
# over blocks: auto (provisional rule: wgmma there at every M) vs gemv vs wgmma forced, bf16 beside;
# M = 17 / 24 / 32 auto on the same shapes (the committed rule of f64e700); int8 tests.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  $PY setup.py build_ext --inplace > "$R/build.log" 2>&1; echo "build rc=$? $(( $(date +%s) - t0 )) s"
SH=768x2048,1536x2048,2048x2048,1024x4096,1024x8192,2048x768,4096x4096
for path in auto gemv wgmma; do
  t0=$(date +%s)
  PYTHONPATH=. timeout 100 $PY benchmarks/micro/env_ab.py --op int8 --path $path --var TORCHQUANT_PDL --values auto \
    --shapes $SH --ms 1,2,4,8,16 $( [ $path = auto ] && echo --dense ) --out "$R/m1_$path.csv" > "$R/m1_$path.log" 2>&1
  echo "$path rc=$? $(( $(date +%s) - t0 )) s"
done
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op int8 --path auto --var TORCHQUANT_PDL --values auto \
    --shapes $SH --ms 17,24,32 --dense --out "$R/m17_auto.csv" > "$R/m17_auto.log" 2>&1
echo "m17 rc=$?"
t0=$(date +%s)
timeout -k 10 150 $PY -m pytest -q --timeout=120 -p no:cacheprovider -n 16 tests/test_int8_cuda.py tests/test_int8_wgmma_cuda.py \
  > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -10; tail -n 1 "$R/tests.log"
paste -d' ' <(grep "^int8" "$R/m1_auto.log") <(grep "^int8" "$R/m1_gemv.log" | sed 's/.*auto:/gemv:/') <(grep "^int8" "$R/m1_wgmma.log" | sed 's/.*auto:/wgmma:/')
grep "^int8" "$R/m17_auto.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
