#!/usr/bin/env bash
# 2026-12-05f call 4: is the decode GEMVs' last few percent at 28672x8192 M = 1 a tail effect?
# int8_matmul (1792 blocks of 16 channels, two per SM: 6.8 waves), fp8_block and nvfp4 (layout 1)
# at M = 1 on K = 8192 layers whose N puts the int8 grid at 6.0 / 6.5 / 6.8 / 7.0 / 7.25 / 8.0
# waves of 264 blocks; the share of the read ceiling per shape says whether whole waves stream
# better. int8 also with 4 loads in flight (3 blocks per SM). Run from the repository root,
# carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
. benchmarks/call_setup.sh "$1"
S=25344x8192,27456x8192,28672x8192,29568x8192,30624x8192,33792x8192
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op int8 --path auto --shapes $S --var TORCHQUANT_INT8_GEMV_DEEP \
  --values auto,-1,auto,-1 --ms 1 --out "$R/int8_waves.csv" > "$R/int8_waves.log" 2>&1
echo "int8 rc=$? $(( $(date +%s) - t0 )) s"; grep int8 "$R/int8_waves.log"
PYTHONPATH=. timeout 120 $PY benchmarks/micro/env_ab.py --op fp8 --path auto --shapes $S --var TORCHQUANT_FP8_KSPLIT \
  --values auto,auto --ms 1 --out "$R/fp8_waves.csv" > "$R/fp8_waves.log" 2>&1
echo "fp8 rc=$? $(( $(date +%s) - t0 )) s"; grep fp8 "$R/fp8_waves.log"
PYTHONPATH=. timeout 120 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 1 --path auto --shapes $S --var TORCHQUANT_NVFP4_KS \
  --values auto,auto --ms 1 --out "$R/nvfp4_waves.csv" > "$R/nvfp4_waves.log" 2>&1
echo "nvfp4 rc=$? $(( $(date +%s) - t0 )) s"; grep nvfp4 "$R/nvfp4_waves.log"
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
