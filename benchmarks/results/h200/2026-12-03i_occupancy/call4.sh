#!/usr/bin/env bash
# 2026-12-03i call 4: fp8_block at M = 5..8 through the wgmma GEMV on the Llama-3-8B layer's
# shapes (auto takes it there only from 256M weights). The op alone (path auto / wgmma) and the
# layer chain with the M = 5..8 threshold lowered by TORCHQUANT_FP8_WGMMA_M5_MIN (in 2^20
# weights: 64 takes gate_up 28672x4096 (112), 16 also down (56) and qkv (24)).
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu timeout 250 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
ab() { local name=$1; shift; PYTHONPATH=. timeout 90 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
for dt in bf16 fp16; do
  ab path_$dt --op fp8 --act-dtype $dt --var path --values auto,wgmma,auto,wgmma \
    --shapes 28672x4096,14336x4096,6144x4096,4096x14336,4096x4096,28672x8192 --ms 5,8
done
for dt in bf16 fp16; do
  PYTHONPATH=. timeout 80 $PY benchmarks/micro/pdl_ab.py --formats fp8_block --ms 8 --var TORCHQUANT_FP8_WGMMA_M5_MIN \
    --modes auto,64,16,auto,64,16 --dtype $dt --out "$R/layer_$dt.csv" > "$R/layer_$dt.log" 2>&1
  echo "layer $dt rc=$?"; grep fused "$R/layer_$dt.log"
done
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
