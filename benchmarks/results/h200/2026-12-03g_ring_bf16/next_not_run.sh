#!/usr/bin/env bash
# Prepared in session 2026-12-03g for the next GPU session (this one's device time was spent).
# Where the two closest decode targets lose their last few percent:
# (1) Nsight Compute stall reasons per SASS instruction of fp8_block_gemv's wgmma GEMV
#     (dq_gemv_sm90a_kernel) at 28672x8192, M = 8 and 16, fp16 (65.3-65.6 us, 84-85 % of the
#     ceiling; issue 4 wants 61 us at M <= 8): is it DRAM-bound, or the consumers' wait per
#     64-K half, or the single producer thread?
# (2) the int8 2:4 decode tile choice at 28672x8192, M = 8 / 16 (40.9-41.1 us = 82 %; issue 6
#     wants 85 %, 39.3 us): 16c1x2 (auto) against 16c1, the cluster K split 16c1k with 2 ranks,
#     and the activation box kept whole.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu,csrc/sparse/sparse24.cu,csrc/sparse/sparse24_gemm_sm90a.cu,csrc/int8/int8_matmul.cu \
  timeout 300 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
for m in 8 16; do
  PYTHON=$PY bash benchmarks/micro/ncu_source.sh "$R" fp8_wgmma_m$m dq_gemv_sm90a \
    --only 28672,8192,$m --ops fp8 --paths wgmma --dtype fp16 | head -n 40
done
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op sparse24_int8 --path wgmma --var TORCHQUANT_SP24_WGMMA_TILE \
  --values auto,16c1,16c1k,auto,16c1,16c1k --env TORCHQUANT_SP24_KSPLIT=2 --shapes 28672x8192,57344x8192 --ms 8,16 \
  --out "$R/i8sp_tiles.csv" > "$R/i8sp_tiles.log" 2>&1
echo "tiles rc=$?"; grep "M=" "$R/i8sp_tiles.log"
PYTHONPATH=. timeout 30 $PY benchmarks/micro/env_ab.py --op sparse24_int8 --path wgmma --var TORCHQUANT_SP24_WGMMA_BOX \
  --values auto,0 --shapes 28672x8192 --ms 8,16 --out "$R/i8sp_box.csv" > "$R/i8sp_box.log" 2>&1
echo "box rc=$?"; grep "M=" "$R/i8sp_box.log"
# (3) knobs that need no code, on the two closest decode targets: the fp8 ring kernel at
#     28672x8192 M <= 8 with K split over 2 warps per block and with x through the ring, and
#     the int8 gemv's deep loads on the large grid (call 4: 58.2-58.3 forced vs 58.6-58.8 us).
PYTHONPATH=. timeout 40 $PY benchmarks/micro/env_ab.py --op fp8 --act-dtype fp16 --var TORCHQUANT_FP8_KSPLIT \
  --path auto --values auto,2,auto,2 --shapes 28672x8192,128256x4096 --ms 1,4,8 --out "$R/fp8_ks.csv" > "$R/fp8_ks.log" 2>&1
echo "fp8 ks rc=$?"; grep "M=" "$R/fp8_ks.log"
# 4096x4096 at M = 1 (7.6 us against 7): auto splits K over 4 warps (8 stages of ring each, two
# round trips); 8 or 16 warps put every stage of a warp in flight at once.
PYTHONPATH=. timeout 40 $PY benchmarks/micro/env_ab.py --op fp8 --act-dtype fp16 --var TORCHQUANT_FP8_KSPLIT \
  --path auto --values auto,8,16,auto,8,16 --shapes 4096x4096,6144x4096,4096x14336 --ms 1,8 --out "$R/fp8_ks_small.csv" > "$R/fp8_ks_small.log" 2>&1
echo "fp8 ks small rc=$?"; grep "M=" "$R/fp8_ks_small.log"
PYTHONPATH=. timeout 40 $PY benchmarks/micro/env_ab.py --op fp8 --act-dtype fp16 --var TORCHQUANT_FP8_XRING \
  --path auto --values auto,1,auto,1 --shapes 28672x8192,4096x4096 --ms 1,8 --out "$R/fp8_xr.csv" > "$R/fp8_xr.log" 2>&1
echo "fp8 xr rc=$?"; grep "M=" "$R/fp8_xr.log"
PYTHONPATH=. timeout 40 $PY benchmarks/micro/env_ab.py --op int8 --var TORCHQUANT_INT8_GEMV_DEEP \
  --path auto --values auto,1,auto,1 --shapes 28672x8192,57344x8192 --ms 1,4,8 --out "$R/i8_deep.csv" > "$R/i8_deep.log" 2>&1
echo "int8 deep rc=$?"; grep "M=" "$R/i8_deep.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
