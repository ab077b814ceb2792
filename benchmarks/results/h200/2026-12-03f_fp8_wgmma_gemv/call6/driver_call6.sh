#!/usr/bin/env bash
# Session 2026-12-03f call 6 (the device time left after refused starts): main at 9788510 (the
# wgmma GEMV with bf16 through fp32 by default on both tiles, auto also at M = 5..8 on >= 256M
# weights, the fp8 ops' shared launch preparation). Build, the fp8 and dequantizing-GEMM tests,
# then a short bf16 / fp16 auto table.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu \
  timeout 160 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -E "error|spill" "$R/build.log" | grep -v " 0 bytes spill" | head -5
t0=$(date +%s)
timeout -k 5 70 $PY -m pytest -q --timeout=50 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_fp8_wgmma_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
for dt in bf16 fp16; do
  PYTHONPATH=. timeout 12 $PY benchmarks/micro/env_ab.py --op fp8 --act-dtype $dt --var path --values auto --shapes 28672x8192,128256x4096,57344x8192,14336x4096 --ms 1,8,16 --dense --out "$R/fp8_$dt.csv" 2>&1 | tee "$R/fp8_$dt.log" | grep "M="
done
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
