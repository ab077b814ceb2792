#!/usr/bin/env bash
# 2026-12-06d call 2 (6068a71: the direct GEMV's row builds 10-12, forced only). (1) the direct
# tests (builds 2-12 give the default build's bits); (2) path direct, builds 8 (the large-grid
# default) / 10 (32 rows, U = 1, 3 blocks per SM) / 11 (32 rows, U = 2, 2) / 12 (64 rows, U = 1,
# 2), two rounds, seven Llama-3 layers, M = 1 / 2 / 4 / 6 / 8; (3) the other side of the rule in the
# same process: path auto (the wgmma GEMV at M > 4 on the larger grids) against
# TORCHQUANT_NVFP4_DIRECT_MAX_M=-1, M = 5 / 6 / 8 on the four larger grids.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
SH=4096x4096,6144x4096,4096x14336,14336x4096,28672x4096,28672x8192,128256x4096
$PY benchmarks/micro/device_caps.py 2>&1 | tee "$R/caps.log"
timeout 120 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py -k direct > "$R/tests_direct.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_direct.log"; grep -E "^FAILED" "$R/tests_direct.log" | head -8
PYTHONPATH=. timeout 200 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT --values 8,10,11,12,8,10,11,12 --ms 1,2,4,6,8 --out "$R/rows.csv" > "$R/rows.log" 2>&1
echo "rows rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/rows.log" | cut -c1-150
PYTHONPATH=. timeout 100 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto \
  --shapes 14336x4096,28672x4096,28672x8192,128256x4096 \
  --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values auto,-1,auto,-1 --ms 5,6,8 --out "$R/rule.csv" > "$R/rule.log" 2>&1
echo "rule rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/rule.log" | cut -c1-150
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
