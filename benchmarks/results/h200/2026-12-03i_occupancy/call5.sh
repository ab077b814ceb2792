#!/usr/bin/env bash
# 2026-12-03i call 5: fp8_block 4096x4096 with bf16 activations at M = 1 / 2 (7.0-7.1 us against
# the 7 us target): the x-through-ring depth (TORCHQUANT_FP8_XRING 3 / 4, unset = the narrow
# rule) and the K split (TORCHQUANT_FP8_KSPLIT 4 / 8 / 16), each in one process, 4 rounds.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu timeout 200 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
ab() { local name=$1; shift; PYTHONPATH=. timeout 90 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
ab xr --op fp8 --path auto --var TORCHQUANT_FP8_XRING --values auto,3,4,auto,3,4,auto,3,4,auto,3,4 \
  --shapes 4096x4096 --ms 1,2
ab ks --op fp8 --path auto --var TORCHQUANT_FP8_KSPLIT --values auto,4,8,16,auto,4,8,16,auto,4,8,16 \
  --shapes 4096x4096 --ms 1,2
ab ks16 --op fp8 --path auto --act-dtype fp16 --var TORCHQUANT_FP8_KSPLIT --values auto,8,16,auto,8,16 \
  --shapes 4096x4096 --ms 1
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
