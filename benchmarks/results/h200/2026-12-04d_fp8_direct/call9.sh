#!/usr/bin/env bash
# 2026-12-04d call 9: the fp8_block_gemv tables (path auto) on the anchors / Llama-3 8B and 70B
# shapes, M = 1 / 2 / 4 / 8 / 16, fp16 and bf16, beside cuBLAS in the same dtype, on the tree of
# call 8 (2 ring stages). Build: fp8_block_gemv.cu and the Hopper module (dq_gemm_sm90a.cu, the
# wgmma GEMV that auto takes at M = 9..16 on the large layers).
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
t0=$(date +%s)
. benchmarks/device_env.sh 16
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu timeout 150 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
SH=4096x4096,6144x4096,14336x4096,28672x4096,4096x14336,8192x8192,10240x8192,28672x8192,57344x8192,8192x28672,128256x4096
for dt in fp16 bf16; do
  PYTHONPATH=. timeout 65 $PY benchmarks/micro/env_ab.py --op fp8 --path auto --act-dtype $dt --var path --values auto \
    --shapes $SH --ms 1,2,4,8,16 --dense --out "$R/fp8_$dt.csv" > "$R/fp8_$dt.log" 2>&1
  echo "fp8 $dt rc=$?"
done
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
