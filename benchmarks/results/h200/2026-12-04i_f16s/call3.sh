#!/usr/bin/env bash
# 2026-12-04i call 3: the tree after the scaled kF16 form was removed (ffcb7f5 and on). Full sm_90
# build; the CUDA tests of every format; compute-sanitizer memcheck of the nvfp4 x-resident kernel;
# bench_e2e at M = 1 / 2 / 8; the fp8_block layer chain at M = 8 with the wgmma GEMV's M = 5..8
# threshold at its default (256 M weights) / 16 M (every chain layer on wgmma) / never; the int8
# and fp8 decode of 28672x8192 at M = 1 / 8 (auto), three rounds.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
timeout 250 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -i "spill stores" "$R/build.log" | grep -v " 0 bytes spill" | head -3
t1=$(date +%s)
timeout -k 5 220 $PY -m pytest -q --timeout=120 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_fp8_wgmma_cuda.py \
  tests/test_int8_cuda.py tests/test_int8_wgmma_cuda.py tests/test_pdl_cuda.py tests/test_nn.py tests/test_nvfp4_cuda.py \
  tests/test_nvfp4_wgmma_cuda.py tests/test_sparse24.py tests/test_sparse24_wgmma_cuda.py tests/test_ops.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
PYTHONPATH=. timeout 40 compute-sanitizer --tool memcheck --print-limit 20 $PY benchmarks/micro/nvfp4_xres_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; tail -n 1 "$R/memcheck.log"
PYTHONPATH=. timeout 90 $PY benchmarks/bench_e2e.py --ms 1,2,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$?"; grep "fused" "$R/e2e.log" | grep -E "QuantLinear (fp8_block|nvfp4|int8) |bf16 F.linear" | sed 's/\[e2e\] Llama-3-8B //'
PYTHONPATH=. timeout 40 $PY benchmarks/micro/pdl_ab.py --formats fp8_block --ms 8 \
  --var TORCHQUANT_FP8_WGMMA_M5_MIN --modes=auto,16,100000,auto,16,100000 --out "$R/chain_m5.csv" > "$R/chain_m5.log" 2>&1
echo "chain rc=$?"; grep "fused" "$R/chain_m5.log"
for op in int8 fp8; do
  PYTHONPATH=. timeout 40 $PY benchmarks/micro/env_ab.py --op $op --path auto --act-dtype bf16 --var path --values=auto,auto,auto \
    --shapes 28672x8192 --ms 1,8 --out "$R/$op.csv" > "$R/$op.log" 2>&1
  echo "$op rc=$?"; grep "M=" "$R/$op.log"
done
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
