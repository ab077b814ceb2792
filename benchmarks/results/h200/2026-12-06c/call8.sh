#!/usr/bin/env bash
# 2026-12-06c call 8 (csrc 88650ae: direct_build picks builds 7 / 8, x loaded with the weight).
# The same on either card: (1) the nvfp4 / nn tests; (2) bench_e2e, the fused Llama-3-8B layer
# (QuantLinear's default layout 3); (3) the direct rule's other side, on the new builds: auto /
# the ring and wgmma GEMVs (TORCHQUANT_NVFP4_DIRECT_MAX_M=-1) / the direct GEMV at every M <= 8
# (MAX_M=8), seven Llama-3 layers, M = 1 / 2 / 4 / 8, two rounds. On an H200 (4) the builds
# 1 / 3 / 4 / 7 / 8 / 9 on path direct as well (call7.sh's A/B).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
SH=4096x4096,6144x4096,4096x14336,14336x4096,28672x4096,28672x8192,128256x4096
$PY benchmarks/micro/device_caps.py 2>&1 | tee "$R/caps.log"
timeout 150 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_nvfp4_wgmma_cuda.py \
  tests/test_nn.py > "$R/tests_nvfp4.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_nvfp4.log"; grep -E "^FAILED" "$R/tests_nvfp4.log" | head -8
timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_1" > "$R/e2e_1.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_1.log" | grep -E "bf16 F.linear|QuantLinear nvfp4|fp8" | cut -c1-100
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values auto,-1,8,auto,-1,8 --ms 1,2,4,8 --out "$R/rule.csv" > "$R/rule.log" 2>&1
echo "rule rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/rule.log" | cut -c1-150
if [[ "$gpu" == *H200* ]]; then
  PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct --shapes $SH \
    --var TORCHQUANT_NVFP4_DIRECT --values 1,3,4,7,8,9,1,3,4,7,8,9 --ms 1,2,4,8 --out "$R/direct_xr.csv" > "$R/direct_xr.log" 2>&1
  echo "direct_xr rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/direct_xr.log" | cut -c1-150
fi
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
