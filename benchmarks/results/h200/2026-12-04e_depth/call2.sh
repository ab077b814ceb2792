#!/usr/bin/env bash
# 2026-12-04e call 2: call 1 again with int8 built (call 1's int8 2:4 runs needed quantize_int8)
# and a 2-stage fp8 wgmma GEMV tile (16x2s2): TORCHQUANT_FP8_WGMMA_TILE auto (16x2, 5 stages) /
# 16x2s3 / 16x2s2 on more shapes, and the int8 2:4 decode tiles' depths as in call 1.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
export TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu,csrc/sparse/sparse24.cu,csrc/sparse/sparse24_gemm_sm90a.cu,csrc/int8/int8_matmul.cu
t0=$(date +%s)
timeout 300 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -i "spill stores" "$R/build.log" | grep -v " 0 bytes spill" | head -3
t1=$(date +%s)
timeout -k 5 120 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py -k "wgmma_tiles" > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -8; tail -n 1 "$R/tests.log"
ab() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout "$to" $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"
}
for dt in fp16 bf16; do
  ab fp8_$dt 120 --op fp8 --path wgmma --act-dtype $dt --var TORCHQUANT_FP8_WGMMA_TILE --values auto,16x2s3,16x2s2 \
    --shapes 28672x8192,57344x8192,128256x4096,14336x4096,8192x28672,10240x8192 --ms 8,16
done
op=sparse24_int8
ab ${op}_x2 80 --op $op --path wgmma --var TORCHQUANT_SP24_WGMMA_TILE --values 16c1x2,16c1x2s3,16c1,16c1s6,16c1s4 \
  --shapes 28672x8192 --ms 8,16
ab ${op}_c1 100 --op $op --path wgmma --var TORCHQUANT_SP24_WGMMA_TILE --values 16c1,16c1s6,16c1s4,16c1x2s3 \
  --shapes 57344x8192,128256x4096,14336x4096 --ms 8,16
ab ${op}_k 60 --op $op --path wgmma --var TORCHQUANT_SP24_WGMMA_TILE --values 16c1k,16c1ks4 \
  --shapes 4096x14336,4096x4096 --ms 8,16
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
