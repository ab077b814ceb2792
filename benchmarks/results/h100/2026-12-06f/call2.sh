#!/usr/bin/env bash
# 2026-12-06f call 2 (either card): fp8_block_gemv's path 'direct' (fe83c36), the int8 GEMV's stream
# shape for fp8. (1) the fp8 tests (every forced path, direct included); (2) path auto against direct,
# bf16, the Llama-3 decode layers at M = 1..8, then fp16 on two; (3) the three load-depth builds;
# (4) bench_e2e with auto taking direct at M <= 8 (TORCHQUANT_FP8_DIRECT=1) and without, same machine.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
. benchmarks/call_setup.sh "$1"
timeout 200 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_ops.py > "$R/tests_fp8.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_fp8.log"; grep -E "^FAILED" "$R/tests_fp8.log" | head -8
SH=4096x4096,6144x4096,14336x4096,28672x4096,4096x14336,28672x8192,128256x4096
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op fp8 --var path --values auto,direct,auto,direct \
  --shapes $SH --ms 1,2,4,8 --out "$R/ab_bf16.csv" > "$R/ab_bf16.log" 2>&1
echo "ab bf16 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|fp8" "$R/ab_bf16.log" | cut -c1-150
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op fp8 --act-dtype fp16 --var path --values auto,direct,auto,direct \
  --shapes 28672x8192,4096x4096 --ms 1,8 --out "$R/ab_f16.csv" > "$R/ab_f16.log" 2>&1
echo "ab fp16 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fp8" "$R/ab_f16.log" | cut -c1-150
PYTHONPATH=. timeout 70 $PY benchmarks/micro/env_ab.py --op fp8 --path direct --var TORCHQUANT_FP8_DIRECT_BUILD \
  --values 1,2,3 --shapes 28672x8192,128256x4096,14336x4096,4096x4096 --ms 1,8 --out "$R/builds.csv" > "$R/builds.log" 2>&1
echo "builds rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fp8" "$R/builds.log" | cut -c1-150
TORCHQUANT_FP8_DIRECT=1 timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_direct" > "$R/e2e_direct.log" 2>&1
echo "e2e direct rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_direct.log" | grep -E "bf16 F.linear|QuantLinear fp8_block( static)?  " | cut -c1-100
timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear fp8_block( static)?  " | cut -c1-100
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
