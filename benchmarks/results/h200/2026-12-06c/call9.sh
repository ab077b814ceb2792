#!/usr/bin/env bash
# 2026-12-06c call 9 (csrc after call 8: direct_build 7 / 8, and on cards of <= 15 DRAM bytes per SM
# clock the larger grids at M <= 4 on any size). (1) the nvfp4 / nn tests (the auto-rule test holds
# the new rule); (2) bench_e2e, the fused Llama-3-8B layer (twice on an H100, once on an H200);
# (3) auto against the ring / wgmma GEMVs (TORCHQUANT_NVFP4_DIRECT_MAX_M=-1) and, on an H200, the
# direct GEMV at every M <= 8 (MAX_M=8), seven Llama-3 layers, M = 1 / 2 / 4 / 8; (4) on an H200
# the builds 1 / 3 / 4 / 7 / 8 / 9 on path direct (call7.sh's A/B), the card's own answer.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
SH=4096x4096,6144x4096,4096x14336,14336x4096,28672x4096,28672x8192,128256x4096
h200=0; [[ "$gpu" == *H200* ]] && h200=1
$PY benchmarks/micro/device_caps.py 2>&1 | tee "$R/caps.log"
timeout 150 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_nvfp4_wgmma_cuda.py \
  tests/test_nn.py > "$R/tests_nvfp4.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_nvfp4.log"; grep -E "^FAILED" "$R/tests_nvfp4.log" | head -8
for r in $(seq 1 $(( 2 - h200 ))); do
  timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_$r" > "$R/e2e_$r.log" 2>&1
  echo "e2e $r rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_$r.log" | grep -E "bf16 F.linear|QuantLinear nvfp4|fp8_block  " | cut -c1-100
done
vals=auto,-1,auto,-1; (( h200 )) && vals=auto,-1,8,auto,-1,8
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values $vals --ms 1,2,4,8 --out "$R/rule.csv" > "$R/rule.log" 2>&1
echo "rule rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/rule.log" | cut -c1-150
if (( h200 )); then
  PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct --shapes $SH \
    --var TORCHQUANT_NVFP4_DIRECT --values 1,3,4,7,8,9,1,3,4,7,8,9 --ms 1,2,4,8 --out "$R/direct_xr.csv" > "$R/direct_xr.log" 2>&1
  echo "direct_xr rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/direct_xr.log" | cut -c1-150
fi
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
