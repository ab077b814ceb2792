#!/usr/bin/env bash
# Session 2026-12-03c call 4: the A-box cut also applies to one-M-tile grids of 128-row tiles
# (M <= 128). Same-process A/B of TORCHQUANT_INT8_WGMMA_ABOX=0 (full box) against the default
# at M = 48..128 and 2048, int8_matmul auto, bf16 cuBLAS beside.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu timeout 220 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op int8 --path auto --var TORCHQUANT_INT8_WGMMA_ABOX \
  --values 0,auto,0,auto --shapes 4096x4096,14336x4096,28672x4096,4096x14336,8192x8192,28672x8192,128256x4096,2048x768 \
  --ms 48,64,100,128,2048 --dense --out "$R/abox_prefill.csv" > "$R/abox_prefill.log" 2>&1
echo "abox prefill rc=$? $(( $(date +%s) - t0 )) s"; grep "M=" "$R/abox_prefill.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
