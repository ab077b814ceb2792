#!/usr/bin/env bash
# 2026-12-06d call 10 (csrc after call 9: direct_build takes builds 15 / 13 / 14 at M = 9..16, and on
# cards of <= 15 DRAM bytes per SM clock direct_rule sends M = 9..16 on one-wave grids with K <= 4096
# to the direct GEMV). (1) the nvfp4 / nn tests; (2) auto against the ring / wgmma GEMVs
# (TORCHQUANT_NVFP4_DIRECT_MAX_M=-1), seven Llama-3 layers, M = 1 / 8 / 9 / 12 / 16, two rounds.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
SH=4096x4096,6144x4096,4096x14336,14336x4096,28672x4096,28672x8192,128256x4096
timeout 150 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_nvfp4_wgmma_cuda.py \
  tests/test_nn.py > "$R/tests_nvfp4.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_nvfp4.log"; grep -E "^FAILED" "$R/tests_nvfp4.log" | head -8
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values auto,-1,auto,-1 --ms 1,8,9,12,16 --out "$R/rule.csv" > "$R/rule.log" 2>&1
echo "rule rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/rule.log" | cut -c1-150
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
