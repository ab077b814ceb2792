#!/usr/bin/env bash
# 2026-12-04f call 5: compute-sanitizer memcheck of nvfp4_gemv's wgmma GEMV on
# the final tree: every tile, split-K auto / 3, ragged N, M = 1 / 7 / 16 / 33, both dtypes
# (benchmarks/micro/nvfp4_wgmma_memcheck.py).
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
export TORCHQUANT_ONLY_SOURCES=csrc/nvfp4/nvfp4_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu
t0=$(date +%s)
timeout 250 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
for tool in memcheck; do
  PYTHONPATH=. timeout 240 compute-sanitizer --tool $tool --print-limit 20 $PY benchmarks/micro/nvfp4_wgmma_memcheck.py \
    > "$R/$tool.log" 2>&1
  echo "$tool rc=$?"; tail -n 3 "$R/$tool.log"
done
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
