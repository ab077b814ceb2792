#!/usr/bin/env bash
# 2026-12-04i call 5: x through the ring for the fp8_block ring GEMV's K split of 4 (call 4:
# 6144x4096 M = 8 9.8 with the wide rule against 10.8). TORCHQUANT_FP8_XRING unset (= 5, the
# narrow rule) / 6 (narrow + every K split of exactly 4) / -1 (never), two rounds, bf16 and fp16,
# on the K-split-4 shapes 6144x4096, 8192x4096, 5120x4096, 6144x2048 and the chain's other
# three at M = 1 / 2 / 4 / 8 / 16; the fp8_block layer chain at M = 1 / 2 / 4 / 8 / 16, bf16 and fp16.
# fp8 source alone built. Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu timeout 200 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
ab() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout "$to" $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"
}
for dt in bf16 fp16; do
  ab xr_$dt 100 --op fp8 --path auto --act-dtype $dt --var TORCHQUANT_FP8_XRING --values=auto,6,-1,auto,6,-1 \
    --shapes 6144x4096,8192x4096,5120x4096,6144x2048,4096x4096,28672x4096,4096x14336 --ms 1,2,4,8,16
  PYTHONPATH=. timeout 60 $PY benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,2,4,8,16 --dtype $dt \
    --var TORCHQUANT_FP8_XRING --modes=auto,6,auto,6 --out "$R/chain_$dt.csv" > "$R/chain_$dt.log" 2>&1
  echo "chain $dt rc=$?"; grep "fused" "$R/chain_$dt.log"
done
TORCHQUANT_FP8_XRING=6 timeout -k 5 100 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests.log" 2>&1
echo "tests (XRING=6) rc=$?"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -6; tail -n 1 "$R/tests.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
