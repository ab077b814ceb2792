#!/usr/bin/env bash
# 2026-12-05 call 4: QuantLinear's nvfp4 default in the decode order (nvfp4_layout="auto") on the
# GPU: the module tests and the nvfp4 CUDA tests, bench_e2e (every format; "QuantLinear nvfp4" is
# now layout 1, "nvfp4 layout0" the contrast), bench_nvfp4 with its "tq auto layout1" rows, and
# int8 at M = 12..16 with the gemv and the wgmma GEMM forced side by side (the M = 16 rule).
# Run from the repository root on the device, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
. benchmarks/call_setup.sh "$1"
timeout 200 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nn.py tests/test_nvfp4_wgmma_cuda.py tests/test_nvfp4_layout.py \
  tests/test_nvfp4_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 "$R/tests.log"; grep -E "^FAILED|Error" "$R/tests.log" | head -10
timeout 150 $PY benchmarks/bench_e2e.py --ms 1,2,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear" | cut -c1-80
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op int8 --var path --values gemv,wgmma,gemv,wgmma \
  --shapes 28672x8192,8192x28672,57344x8192,10240x8192 --ms 12,13,16 --out "$R/int8_m16.csv" > "$R/int8_m16.log" 2>&1
echo "int8 M=16 rc=$?"; cat "$R/int8_m16.log"
timeout 120 $PY benchmarks/bench_nvfp4.py --ms 1,2,4,8,16 --out "$R/nvfp4" > "$R/nvfp4.log" 2>&1
echo "nvfp4 bench rc=$? $(( $(date +%s) - t0 )) s"; grep -E "tq auto|bf16" "$R/nvfp4.log" | head -60
echo "elapsed $(( $(date +%s) - t0 )) s"
