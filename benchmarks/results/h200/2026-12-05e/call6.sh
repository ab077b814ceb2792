#!/usr/bin/env bash
# 2026-12-05e call 6: the wgmma decode GEMVs' new K-split rule (dq_gemm_sm90a.cu gemv_splits, 0c5a184).
# (b, first) auto (the new rule) beside forced
# splits 1 / 2 / 4 (the old rule's choices) on the shapes it changes and on shapes it must leave
# alone, nvfp4 layout 1 M = 5 / 8 / 16 and fp8 M = 16; (a) its tests and the wgmma GEMV tests of
# both formats; (c) bench_e2e at M = 8 (the Llama-3-8B
# down projection, 4096x14336, now splits 8 ways instead of 4).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
. benchmarks/call_setup.sh "$1"
timeout 120 $PY -m pytest -q -p no:cacheprovider tests/test_nvfp4_cuda.py tests/test_fp8_cuda.py -k "split_rule" > "$R/tests_rule.log" 2>&1
echo "rule tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_rule.log"; grep -E "^FAILED|Error" "$R/tests_rule.log" | head -10
S=8192x8192,10240x8192,8192x28672,4096x14336,4096x4096,6144x4096,14336x4096,4096x11008,28672x8192
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 1 --path auto --shapes $S --var TORCHQUANT_DQ_WGMMA_SPLITS \
  --values auto,1,2,4,auto --ms 5,8,16 --out "$R/nvfp4_split.csv" > "$R/nvfp4_split.log" 2>&1
echo "nvfp4 rc=$? $(( $(date +%s) - t0 )) s"; grep nvfp4 "$R/nvfp4_split.log"
PYTHONPATH=. timeout 80 $PY benchmarks/micro/env_ab.py --op fp8 --path auto --shapes 8192x8192,10240x8192,8192x28672,28672x8192 \
  --var TORCHQUANT_DQ_WGMMA_SPLITS --values auto,1,2,auto --ms 16 --out "$R/fp8_split.csv" > "$R/fp8_split.log" 2>&1
echo "fp8 rc=$? $(( $(date +%s) - t0 )) s"; grep fp8 "$R/fp8_split.log"
el=$(( $(date +%s) - t0 ))
[ $el -lt 300 ] && timeout $(( 400 - el )) $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_fp8_cuda.py -k "wgmma and not split_rule" > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED|Error" "$R/tests.log" | head -10
el=$(( $(date +%s) - t0 ))
[ $el -lt 380 ] && timeout 90 $PY benchmarks/bench_e2e.py --ms 8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (fp8_block|nvfp4)" | cut -c1-90
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
