#!/usr/bin/env bash
# 2026-12-05b call 1: static_weights (the per-call opt-in of the early weight loads under PDL).
# (a) CUDA tests: the PDL tests (static-weight chains on the ring / mma and the Hopper GEMVs, the
#     layers' own-writes fence, unaligned copies), the module's static / graph / compile tests,
#     opcheck, and the nvfp4 tests (also the first GPU run of fcf91fa's nvfp4::for_dtype_layout);
# (b) bench_e2e M = 1 / 8: "QuantLinear <fmt> static" rows beside the default rows in one process,
#     rounds alternating the defaults and TORCHQUANT_PDL_HOPPER_GEMV=1 (the Hopper decode GEMVs,
#     which run nvfp4 at M = 5..16 and fp8 where chosen, with PDL: their static rows then issue
#     the first weight stages before the wait).
# (c) 2026-12-05c: the first GPU run of quantize_int8 at fp32's edges (test_int8_cuda -k quantize),
#     the PDL build check and deepcopy fence (test_pdl_cuda), inference-only outputs and the fakes.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
. benchmarks/call_setup.sh "$1"
timeout 150 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_pdl_cuda.py > "$R/tests_pdl.log" 2>&1
echo "pdl tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_pdl.log"; grep -E "^FAILED|Error" "$R/tests_pdl.log" | head -10
# (d) 2026-12-05c: int8 static_weight (the gemv's first weight loads before its PDL wait) beside the
#     default, 28672x8192 M = 1 / 16 (the issue's <= 57 us at M = 1), one process
timeout 120 $PY benchmarks/bench_int8.py --shapes 28672x8192 --ms 1,16 --forced-max-m 1 --out "$R/int8" > "$R/int8.log" 2>&1
echo "int8 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "tq auto|bf16" "$R/int8.log" | cut -c1-110 | head -8
# CALL1_QUICK=1: one round of each, no other tests (a short device window)
runs="default_1 hopper_1 default_2 hopper_2"; [ "${CALL1_QUICK:-0}" = 1 ] && runs="default_1 hopper_1"
for run in $runs; do
  el=$(( $(date +%s) - t0 )); if [ $el -gt 400 ]; then echo "skip $run at $el s"; continue; fi
  if [ ${run%_*} = hopper ]; then export TORCHQUANT_PDL_HOPPER_GEMV=1; else unset TORCHQUANT_PDL_HOPPER_GEMV; fi
  timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_$run" > "$R/e2e_$run.log" 2>&1
  echo "e2e $run rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_$run.log" | grep -E "bf16 F.linear|QuantLinear (int8|fp8_block|nvfp4)" | cut -c1-90
done
unset TORCHQUANT_PDL_HOPPER_GEMV
el=$(( $(date +%s) - t0 )); [ "${CALL1_QUICK:-0}" = 1 ] && el=600
[ $el -lt 540 ] && timeout $(( 560 - el )) $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_ops.py tests/test_nvfp4_cuda.py \
  tests/test_nvfp4_wgmma_cuda.py tests/test_nvfp4_layout.py tests/test_nn.py tests/test_int8_cuda.py tests/test_seed_claims.py \
  -k "(not test_nn and not test_int8_cuda) or static or graph or compile or quantize" \
  > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED|Error" "$R/tests.log" | head -10
# (e) memcheck of the int8 gemv's early round (static_weight) and quantize_int8's edges, if time is left
el=$(( $(date +%s) - t0 ))
[ $el -lt 540 ] && timeout $(( 590 - el )) compute-sanitizer --tool memcheck --error-exitcode 9 $PY -m pytest -q -x \
  -p no:cacheprovider tests/test_pdl_cuda.py tests/test_int8_cuda.py -k "int8_gemv_static and 4096x4096 or extremes" \
  > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 2 "$R/memcheck.log"
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
