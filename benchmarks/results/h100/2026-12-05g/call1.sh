#!/usr/bin/env bash
# 2026-12-05g call 1 (0e49ac4): the nvfp4 and int8 CUDA tests (ee240ae: the nvfp4 M = 5..8 rule
# hands its MmaConfig to the launch; 0e49ac4: the int8 gemv's L2 prefetch knob), then on whichever
# card came: the int8 gemv with TORCHQUANT_INT8_GEMV_L2PF = 0 (off, the default) / 1 / 2 rounds
# ahead, the nvfp4 M = 5..8 rule's A/B (auto against TORCHQUANT_NVFP4_XRES=-1, the old rule),
# bench_e2e at M = 1 / 8, and, time allowing, memcheck over the new prefetch and the x-resident
# launches.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
. benchmarks/call_setup.sh "$1"
timeout 150 $PY -m pytest -q -p no:cacheprovider tests/test_nvfp4_cuda.py tests/test_nvfp4_wgmma_cuda.py tests/test_nvfp4_layout.py tests/test_int8_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -5
PYTHONPATH=. timeout 90 $PY benchmarks/micro/env_ab.py --op int8 --path auto \
  --shapes 28672x8192,8192x28672,128256x4096,14336x4096,4096x4096 --var TORCHQUANT_INT8_GEMV_L2PF --values 0,1,2,0,1,2 \
  --ms 1,8 --out "$R/l2pf.csv" > "$R/l2pf.log" 2>&1
echo "l2pf rc=$? $(( $(date +%s) - t0 )) s"; grep int8 "$R/l2pf.log" | head -40
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 1 --path auto \
  --shapes 6144x4096,8192x4096,8192x8192,5120x5120,4096x4096,28672x8192 --var TORCHQUANT_NVFP4_XRES --values auto,-1,auto,-1 \
  --ms 5,8 --out "$R/xres_rule.csv" > "$R/xres_rule.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep nvfp4 "$R/xres_rule.log"
el=$(( $(date +%s) - t0 ))
[ $el -lt 380 ] && timeout 90 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (int8|fp8_block|nvfp4)" | cut -c1-100
el=$(( $(date +%s) - t0 ))
[ $el -lt 470 ] && TORCHQUANT_INT8_GEMV_L2PF=2 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 $PY -m pytest -q -p no:cacheprovider tests/test_int8_cuda.py -k "l2_prefetch or deep_loads" > "$R/memcheck_int8.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 "$R/memcheck_int8.log"
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
