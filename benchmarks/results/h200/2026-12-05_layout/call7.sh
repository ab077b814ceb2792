#!/usr/bin/env bash
# NOT RUN (the session's device time ran out): 2026-12-05 call 7: bench_e2e with TORCHQUANT_PDL=smem (the opt-in in which the fp8_block ring
# and nvfp4 mma GEMVs copy their first weight stages before griddepcontrol.wait; correct only for
# weights not written by the kernel just before, csrc/common/pdl.h), against the defaults of
# call 4, on the decode-order nvfp4 layers. Run from the repository root, carry=[".prebuilt"].
set -uo pipefail
. benchmarks/call_setup.sh "$1"
for mode in smem default; do
  if [ $mode = smem ]; then export TORCHQUANT_PDL=smem; else unset TORCHQUANT_PDL; fi
  timeout 150 $PY benchmarks/bench_e2e.py --ms 1,2,8 --out "$R/e2e_$mode" > "$R/e2e_$mode.log" 2>&1
  echo "e2e $mode rc=$?"; grep -E "fused" "$R/e2e_$mode.log" | grep -E "bf16 F.linear|QuantLinear (nvfp4|fp8_block) " | cut -c1-80
done
