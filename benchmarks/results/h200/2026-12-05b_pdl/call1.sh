#!/usr/bin/env bash
# 2026-12-05b call 1: static_weights (the per-call opt-in of the early weight loads under PDL).
# (a) CUDA tests: the PDL tests with the new static-weight chains / own-writes fence / unaligned-copy
#     cases, the module's static / graph / compile tests, opcheck, and the nvfp4 tests (also the first
#     GPU run of fcf91fa's host-dispatch refactor, nvfp4::for_dtype_layout);
# (b) bench_e2e, two rounds: "QuantLinear <fmt> static" rows beside the default rows in the same
#     process (fp8_block, nvfp4), and one round under TORCHQUANT_PDL=smem for comparison.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
. benchmarks/call_setup.sh "$1"
timeout 220 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_pdl_cuda.py tests/test_ops.py tests/test_nvfp4_cuda.py \
  tests/test_nvfp4_wgmma_cuda.py tests/test_nvfp4_layout.py "tests/test_nn.py" -k "not test_nn or static or graph or compile" \
  > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 2 "$R/tests.log"; grep -E "^FAILED|Error" "$R/tests.log" | head -10
for run in default_1 default_2 smem_1; do
  el=$(( $(date +%s) - t0 )); if [ $el -gt 470 ]; then echo "skip $run at $el s"; continue; fi
  mode=${run%_*}
  if [ $mode = smem ]; then export TORCHQUANT_PDL=smem; else unset TORCHQUANT_PDL; fi
  timeout 120 $PY benchmarks/bench_e2e.py --ms 1,2,8 --out "$R/e2e_$run" > "$R/e2e_$run.log" 2>&1
  echo "e2e $run rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_$run.log" | grep -E "bf16 F.linear|QuantLinear (fp8_block|nvfp4)" | cut -c1-90
done
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
