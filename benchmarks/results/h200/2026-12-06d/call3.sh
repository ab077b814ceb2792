#!/usr/bin/env bash
# 2026-12-06d call 3 (csrc after call 2: direct_build takes build 12 (64 rows) / 10 (32 rows) on
# grids of more than 3 x SMs blocks of 16 rows at M = 4..8, and on cards of <= 15 DRAM bytes per SM
# clock direct_rule sends those grids to the direct GEMV at M <= 8, not 4). (1) the nvfp4 / nn tests
# (the auto-rule test holds the new rule); (2) compute-sanitizer memcheck of builds 7-12; (3) auto
# against the ring / wgmma GEMVs (TORCHQUANT_NVFP4_DIRECT_MAX_M=-1), seven Llama-3 layers, M = 1 /
# 2 / 4 / 5 / 6 / 7 / 8; (4) bench_e2e, the fused Llama-3-8B layer, twice; (5) on an H200 also the
# direct builds 7 / 8 / 10 / 12 at every M <= 8 (the card's own answer for direct_build and the rule).
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
timeout 150 compute-sanitizer --tool memcheck --print-limit 10 env PYTHONPATH=. $PY \
  benchmarks/micro/nvfp4_direct_memcheck.py 7 8 9 10 11 12 > "$R/memcheck_direct.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 2 "$R/memcheck_direct.log"
PYTHONPATH=. timeout 200 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values auto,-1,auto,-1 --ms 1,2,4,5,6,7,8 --out "$R/rule.csv" > "$R/rule.log" 2>&1
echo "rule rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/rule.log" | cut -c1-150
for r in 1 2; do
  timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_$r" > "$R/e2e_$r.log" 2>&1
  echo "e2e $r rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_$r.log" | grep -E "bf16 F.linear|QuantLinear nvfp4|fp8_block  " | cut -c1-100
done
if (( h200 )); then
  PYTHONPATH=. timeout 200 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct --shapes $SH \
    --var TORCHQUANT_NVFP4_DIRECT --values 1,7,8,10,12,1,7,8,10,12 --ms 1,2,4,6,8 --out "$R/direct.csv" > "$R/direct.log" 2>&1
  echo "direct rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/direct.log" | cut -c1-150
fi
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
