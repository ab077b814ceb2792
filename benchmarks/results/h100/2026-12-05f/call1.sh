#!/usr/bin/env bash
# 2026-12-05f call 1 (ran on an H100): nvfp4_gemv's M = 5..8 rule (8fc5977: the x-resident mma kernel instead of the
# wgmma GEMV where mma_config gives one M tile, K unsplit, <= 1 block per SM). (a) its test and the
# nvfp4 CUDA tests; (b) auto against TORCHQUANT_NVFP4_XRES=-1 (the old rule: wgmma GEMV) and
# against path wgmma, layout 1, bf16, on shapes it takes and shapes it must leave; (c) bench_e2e and
# bench_decode at M = 8 (the Llama-3-8B qkv projection, 6144x4096, is one it takes).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
. benchmarks/call_setup.sh "$1"
timeout 200 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py > "$R/tests.log" 2>&1
echo "nvfp4 tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -10
S=6144x4096,8192x4096,8192x8192,5120x5120,1024x4096,2048x4096,4096x4096,10240x8192,14336x4096,28672x8192
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 1 --path auto --shapes $S --var TORCHQUANT_NVFP4_XRES \
  --values auto,-1,auto,-1 --ms 5,6,8 --out "$R/xres_rule.csv" > "$R/xres_rule.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep nvfp4 "$R/xres_rule.log"
el=$(( $(date +%s) - t0 ))
[ $el -lt 420 ] && timeout 100 $PY benchmarks/bench_e2e.py --ms 8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (fp8_block|nvfp4)" | cut -c1-90
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
