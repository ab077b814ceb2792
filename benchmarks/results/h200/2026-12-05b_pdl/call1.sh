#!/usr/bin/env bash
# 2026-12-05b call 1: (a) the nvfp4 / PDL CUDA tests on fcf91fa's host-dispatch refactor (nvfp4::for_dtype_layout;
# SASS identical, not yet run on a GPU); (b) bench_e2e with TORCHQUANT_PDL=smem (fp8_block ring and nvfp4 mma
# GEMVs copy their first weight stages before griddepcontrol.wait; correct only for weights not written by the
# kernel just before, csrc/common/pdl.h) against the defaults, alternating, two rounds while time lasts.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
. benchmarks/call_setup.sh "$1"
timeout 200 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_nvfp4_wgmma_cuda.py \
  tests/test_nvfp4_layout.py tests/test_pdl_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 2 "$R/tests.log"; grep -E "^FAILED|Error" "$R/tests.log" | head -10
for run in smem_1 default_1 smem_2 default_2; do
  el=$(( $(date +%s) - t0 )); if [ $el -gt 450 ]; then echo "skip $run at $el s"; continue; fi
  mode=${run%_*}
  if [ $mode = smem ]; then export TORCHQUANT_PDL=smem; else unset TORCHQUANT_PDL; fi
  timeout 120 $PY benchmarks/bench_e2e.py --ms 1,2,8 --out "$R/e2e_$run" > "$R/e2e_$run.log" 2>&1
  echo "e2e $run rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_$run.log" | grep -E "bf16 F.linear|QuantLinear" | cut -c1-90
done
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
