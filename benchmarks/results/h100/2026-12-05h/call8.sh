#!/usr/bin/env bash
# 2026-12-05h call 8: nvfp4 weight layout 3 and the direct GEMV (path "direct", docs/nvfp4_gemv.md
# 27-28) on the GPU: its tests and the nvfp4 / int8 / layout / ops CUDA tests (int8's streaming
# load moved to common/ldg.h), compute-sanitizer memcheck of the direct kernel, then the A/B in one
# process: layout 1 (auto: the mma / wgmma GEMVs) against layout 3 (auto: the direct GEMV), bf16,
# M = 1, 2, 4, 8, two rounds; then every other test while device time lasts. On an H200 the same.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
timeout 150 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_nvfp4_layout.py \
  tests/test_int8_cuda.py tests/test_ops.py > "$R/tests_direct.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_direct.log"; grep -E "^FAILED|Error" "$R/tests_direct.log" | head -8
PYTHONPATH=. timeout 90 $PY benchmarks/micro/env_ab.py --op nvfp4 --path auto --var layout --values 1,3,1,3 \
  --shapes 28672x8192,128256x4096,14336x4096,4096x4096,6144x4096,4096x14336 --ms 1,2,4,8 --out "$R/layout13.csv" > "$R/layout13.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/layout13.log"
timeout 60 compute-sanitizer --tool memcheck --print-limit 10 $PY benchmarks/micro/nvfp4_direct_memcheck.py > "$R/memcheck_direct.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 "$R/memcheck_direct.log"
el=$(( $(date +%s) - t0 )); left=$(( 560 - el ))
timeout $left $PY -m pytest -q -p no:cacheprovider -n 16 tests \
  --ignore tests/test_nvfp4_cuda.py --ignore tests/test_nvfp4_layout.py --ignore tests/test_int8_cuda.py \
  --ignore tests/test_ops.py > "$R/tests_rest.log" 2>&1
echo "rest rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_rest.log"; grep -E "^FAILED" "$R/tests_rest.log" | head -5
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
