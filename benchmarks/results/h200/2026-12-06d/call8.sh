#!/usr/bin/env bash
# 2026-12-06d call 8: M = 9..16 (two token tiles). Path auto (the wgmma GEMV there) against path
# direct on builds 7 / 8 / 10 / 12 (each block loops over the token tiles, re-reading its rows),
# seven Llama-3 layers, M = 9 / 12 / 16, two rounds.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
SH=4096x4096,6144x4096,4096x14336,14336x4096,28672x4096,28672x8192,128256x4096
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT --values 7,8,10,12,7,8,10,12 --ms 9,12,16 --out "$R/m16_direct.csv" > "$R/m16_direct.log" 2>&1
echo "direct rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/m16_direct.log" | cut -c1-150
PYTHONPATH=. timeout 100 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values auto,auto --ms 9,12,16 --out "$R/m16_auto.csv" > "$R/m16_auto.log" 2>&1
echo "auto rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/m16_auto.log" | cut -c1-150
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
