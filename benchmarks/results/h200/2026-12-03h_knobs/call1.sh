#!/usr/bin/env bash
# 2026-12-03h call 1: the knob checks prepared in 03g (next_not_run.sh), NCU trimmed to M = 8.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
git rev-parse HEAD > "$R/commit.txt" 2>/dev/null
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu,csrc/sparse/sparse24.cu,csrc/sparse/sparse24_gemm_sm90a.cu,csrc/int8/int8_matmul.cu \
  timeout 300 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
ab() { local name=$1; shift; PYTHONPATH=. timeout 45 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
ab fp8_ks_small --op fp8 --act-dtype fp16 --var TORCHQUANT_FP8_KSPLIT --path auto --values auto,8,16,auto,8,16 \
  --shapes 4096x4096,6144x4096,4096x14336 --ms 1,8
ab i8_deep --op int8 --var TORCHQUANT_INT8_GEMV_DEEP --path auto --values auto,1,auto,1 --shapes 28672x8192,57344x8192 --ms 1,4,8
ab fp8_ks --op fp8 --act-dtype fp16 --var TORCHQUANT_FP8_KSPLIT --path auto --values auto,2,auto,2 \
  --shapes 28672x8192,128256x4096 --ms 1,4,8
ab fp8_xr --op fp8 --act-dtype fp16 --var TORCHQUANT_FP8_XRING --path auto --values auto,1,auto,1 --shapes 28672x8192,4096x4096 --ms 1,8
ab i8sp_tiles --op sparse24_int8 --path wgmma --var TORCHQUANT_SP24_WGMMA_TILE --values auto,16c1,16c1k,auto,16c1,16c1k \
  --env TORCHQUANT_SP24_KSPLIT=2 --shapes 28672x8192,57344x8192 --ms 8,16
ab i8sp_box --op sparse24_int8 --path wgmma --var TORCHQUANT_SP24_WGMMA_BOX --values auto,0 --shapes 28672x8192 --ms 8,16
echo "elapsed $(( $(date +%s) - t0 )) s"
if [ $(( $(date +%s) - t0 )) -lt 420 ]; then
  PYTHON=$PY timeout 120 bash benchmarks/micro/ncu_source.sh "$R" fp8_wgmma_m8 dq_gemv_sm90a \
    --only 28672,8192,8 --ops fp8 --paths wgmma --dtype fp16 | head -n 40
fi
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
