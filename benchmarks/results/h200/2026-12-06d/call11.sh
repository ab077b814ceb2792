#!/usr/bin/env bash
# 2026-12-06d call 11 (not run this session: no H200 came; for the next session's first H200).
# On an H200 only (an H100 exits at once): the rules and builds of docs/nvfp4_gemv.md 33-34 on the
# card they are not measured on, most wanted first (logs are plain files until the end, so a
# timeout keeps what ran). (1) path auto against the ring / wgmma GEMVs (MAX_M=-1) and the direct
# GEMV at every M (MAX_M=16) at M = 1 / 4 / 8 / 16; (2) path direct on builds 1 / 7 / 8 / 10 / 12 at
# M = 1 / 2 / 4 / 6 / 8 and builds 7 / 13 / 14 / 15 at M = 9 / 12 / 16; (3) the nvfp4 / nn tests;
# (4) bench_e2e once; seven Llama-3 layers, two rounds each.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
[[ "$gpu" == *H200* ]] || { echo "not an H200: nothing to do"; exit 0; }
. benchmarks/call_setup.sh "$1"
SH=4096x4096,6144x4096,4096x14336,14336x4096,28672x4096,28672x8192,128256x4096
$PY benchmarks/micro/device_caps.py 2>&1 | tee "$R/caps.log"
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values auto,-1,16,auto,-1,16 --ms 1,4,8,16 --out "$R/rule.csv" > "$R/rule.log" 2>&1
echo "rule rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/rule.log" | cut -c1-150
PYTHONPATH=. timeout 200 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT --values 1,7,8,10,12,1,7,8,10,12 --ms 1,2,4,6,8 --out "$R/direct.csv" > "$R/direct.log" 2>&1
echo "direct rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/direct.log" | cut -c1-150
PYTHONPATH=. timeout 120 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT --values 7,13,14,15,7,13,14,15 --ms 9,12,16 --out "$R/nt2.csv" > "$R/nt2.log" 2>&1
echo "nt2 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/nt2.log" | cut -c1-150
timeout 150 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_nvfp4_wgmma_cuda.py \
  tests/test_nn.py > "$R/tests_nvfp4.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_nvfp4.log"; grep -E "^FAILED" "$R/tests_nvfp4.log" | head -8
timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_1" > "$R/e2e_1.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_1.log" | grep -E "bf16 F.linear|QuantLinear nvfp4|fp8_block  " | cut -c1-100
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
