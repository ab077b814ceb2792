#!/usr/bin/env bash
# 2026-12-06b call 8 (csrc 439bdf7; call 7 = the same driver at 9da7cf0, which got an H100 and ran
# its H100 branch of then: the wide-rule and build A/B behind 439bdf7's rule): the H200's answers for the direct GEMV's rules, most
# important first. On an H200: (1) the card's DRAM bytes per SM clock as torch reads them (the wide
# rule must be off there); (2) the nvfp4 / nn tests (layout 3 is QuantLinear's default); (3)
# bench_e2e, the fused layer with layout 3; (4) layout 1 / 3 under auto on the Llama-3 layers at
# M = 1 / 4 / 8; (5) the direct builds 1 / 3 / 4 / 5 on path direct on the same shapes, the long
# rows of 4096x14336 (the down projection: 56 % of the ceiling at M = 1, 39 % at M = 8 on the ring
# / wgmma GEMVs) and M = 8 included; (6) the load-depth probe in what is left of CALL_TOTAL.
# On an H100: 439bdf7's rule checked: (2), (3) twice, (4) at M = 1 / 2 / 4 / 8 with layout 3's
# ring kernels beside it (TORCHQUANT_NVFP4_DIRECT_MAX_M=-1).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
s0=$(date +%s)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
SH=4096x14336,28672x4096,14336x4096,6144x4096,4096x4096,28672x8192
if [[ "$gpu" == *H200* ]]; then
  PYTHONPATH=.:tests $PY -c "
import torch, conftest
p = torch.cuda.get_device_properties(0)
print(p.name, 'SMs', p.multi_processor_count, 'memory clock kHz', getattr(p, 'memory_clock_rate', None),
      'bus bits', getattr(p, 'memory_bus_width', None), 'SM clock kHz', getattr(p, 'clock_rate', None),
      'DRAM bytes per SM clock x10', conftest.dram_bytes_per_sm_clk_x10())" 2>&1 | tee "$R/caps.log"
  timeout 150 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_nvfp4_wgmma_cuda.py \
    tests/test_nn.py > "$R/tests_nvfp4.log" 2>&1
  echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_nvfp4.log"; grep -E "^FAILED" "$R/tests_nvfp4.log" | head -8
  timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_1" > "$R/e2e_1.log" 2>&1
  echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_1.log" | grep -E "bf16 F.linear|QuantLinear nvfp4|fp8" | cut -c1-100
  PYTHONPATH=. timeout 80 $PY benchmarks/micro/env_ab.py --op nvfp4 --path auto --shapes $SH \
    --var layout --values 1,3,1,3 --ms 1,4,8 --out "$R/layout13.csv" > "$R/layout13.log" 2>&1
  echo "layout13 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/layout13.log"
else
  timeout 150 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_nvfp4_wgmma_cuda.py \
    tests/test_nn.py > "$R/tests_nvfp4.log" 2>&1
  echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_nvfp4.log"; grep -E "^FAILED" "$R/tests_nvfp4.log" | head -8
  for r in 1 2; do
    timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_$r" > "$R/e2e_$r.log" 2>&1
    echo "e2e $r rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_$r.log" | grep -E "bf16 F.linear|QuantLinear nvfp4" | cut -c1-100
  done
  PYTHONPATH=. timeout 100 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto --shapes $SH \
    --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values auto,-1,auto,-1 --ms 1,2,4,8 --out "$R/rule.csv" > "$R/rule.log" 2>&1
  echo "rule rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/rule.log"
  tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"; echo "elapsed $(( $(date +%s) - t0 )) s"; exit 0
fi
PYTHONPATH=. timeout 110 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT --values 1,3,4,5,1,3,4,5 --ms 1,4,8 --out "$R/direct_u.csv" > "$R/direct_u.log" 2>&1
echo "direct_u rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/direct_u.log"
left=$(( ${CALL_TOTAL:-400} - ($(date +%s) - s0) ))
if [[ "$gpu" == *H200* ]] && (( left >= 30 )); then
  PROBE_VARIANTS=U=2,U=3/3,U=4,U=6,U=2pipe,U=3pipe,U=4pipe \
    timeout $left .prebuilt/probe/nvfp4_direct_shape 28672x8192 4096x14336 128256x4096 > "$R/probe.log" 2>&1
  echo "probe rc=$? $(( $(date +%s) - t0 )) s"; grep -E "==|us" "$R/probe.log" | sed -E 's/  +/ /g' | cut -c1-90
fi
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
