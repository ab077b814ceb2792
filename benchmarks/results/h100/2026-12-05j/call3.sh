#!/usr/bin/env bash
# 2026-12-05j call 3 (csrc cbcd374 or later with csrc unchanged): direct_build (U = 4 / 2 blocks per
# SM on grids of <= 2 x SMs blocks), direct_rule's large grids at M <= 4 on cards of <= 15 DRAM bytes
# per SM clock, QuantLinear's bf16 default layout 3. (1) the card's DRAM bytes per SM clock as torch
# reads them (the C++ side reads the same attributes); (2) the nvfp4 / nn / pdl tests; (3) bench_e2e
# twice ("QuantLinear nvfp4" is layout 3 now, "nvfp4 layout1" the old default); (4) layout 1 against
# layout 3 under auto (the new rules) on the Llama-3-8B / 70B layers, one process; (5) the direct
# builds 1 / 3 / 5 on path direct; (6) bench_nvfp4's issue rows.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
PYTHONPATH=.:tests $PY -c "
import torch, conftest
p = torch.cuda.get_device_properties(0)
print(p.name, 'SMs', p.multi_processor_count, 'memory clock kHz', getattr(p, 'memory_clock_rate', None),
      'bus bits', getattr(p, 'memory_bus_width', None), 'SM clock kHz', getattr(p, 'clock_rate', None),
      'DRAM bytes per SM clock x10', conftest.dram_bytes_per_sm_clk_x10())" 2>&1 | tee "$R/caps.log"
timeout 240 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_nvfp4_layout.py \
  tests/test_nvfp4_wgmma_cuda.py tests/test_ops.py tests/test_nn.py tests/test_pdl_cuda.py tests/test_demo.py \
  > "$R/tests_nvfp4.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_nvfp4.log"; grep -E "^FAILED" "$R/tests_nvfp4.log" | head -8
for r in 1 2; do
  timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_$r" > "$R/e2e_$r.log" 2>&1
  echo "e2e $r rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_$r.log" | grep -E "bf16 F.linear|QuantLinear nvfp4" | cut -c1-100
done
SH=28672x8192,128256x4096,28672x4096,14336x4096,6144x4096,4096x4096,4096x14336
PYTHONPATH=. timeout 90 $PY benchmarks/micro/env_ab.py --op nvfp4 --path auto --shapes $SH \
  --var layout --values 1,3,1,3 --ms 1,4,8 --out "$R/layout13.csv" > "$R/layout13.log" 2>&1
echo "layout13 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/layout13.log"
if [[ "$gpu" != *H100* ]]; then  # the H100's A/B of the builds is call 1's
  PYTHONPATH=. timeout 90 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct --shapes $SH \
    --var TORCHQUANT_NVFP4_DIRECT --values 1,3,5,1,3,5 --ms 1,4 --out "$R/direct_u.csv" > "$R/direct_u.log" 2>&1
  echo "direct_u rc=$? $(( $(date +%s) - t0 )) s"; grep -E "nvfp4" "$R/direct_u.log"
fi
timeout 110 $PY benchmarks/bench_nvfp4.py --full --shapes 28672x8192,128256x4096,4096x4096 --ms 1,8,16 \
  --forced-max-m 0 --out "$R/nvfp4_rows" > "$R/nvfp4.log" 2>&1
echo "nvfp4 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "tq auto|static +[0-9]|bf16 F.linear" "$R/nvfp4.log" | cut -c1-100
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
