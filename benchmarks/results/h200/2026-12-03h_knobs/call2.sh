#!/usr/bin/env bash
# 2026-12-03h call 2. (1) A/B of two builds (benchmarks/micro/ab_builds.sh; A = this tree,
# B = ab_old/: the wgmma GEMV loading each scale block's scales one block ahead): fp8_block_gemv
# path wgmma against auto at M = 4 / 8 / 16 on four large layers, fp16 and bf16. Then in build A:
# (2) the fp8 tests (the wgmma GEMV changed), (3) fp8 K split 2 on the many-wave ring grids,
# (4) int8 gemv deep loads on more large grids, (5) the Llama-3-8B layer chain with x through
# the fp8 ring (TORCHQUANT_FP8_XRING=1) against the default, both dtypes.
# Run from the repository root on the device with carry ["ab_old"]: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
AB_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu,csrc/int8/int8_matmul.cu \
AB_CMDS="benchmarks/micro/env_ab.py --op fp8 --act-dtype fp16 --var path --values wgmma,auto --shapes 28672x8192,128256x4096,57344x8192,14336x4096 --ms 4,8,16 --out $R/w16_{v}.csv;benchmarks/micro/env_ab.py --op fp8 --act-dtype bf16 --var path --values wgmma,auto --shapes 28672x8192,128256x4096 --ms 8,16 --out $R/wb16_{v}.csv" \
  timeout 420 bash benchmarks/micro/ab_builds.sh "$R" > "$R/ab.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep -E "build|M=" "$R/ab.log"
. benchmarks/device_env.sh 16
t1=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests_fp8.log" 2>&1
echo "fp8 tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_fp8.log" | head -12; tail -n 1 "$R/tests_fp8.log"
ab() { local name=$1; shift; PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
ab fp8_ks16 --op fp8 --act-dtype fp16 --var TORCHQUANT_FP8_KSPLIT --path auto --values auto,2,auto,2 --shapes 128256x4096,128256x8192 --ms 1,4,8
ab fp8_ksb --op fp8 --act-dtype bf16 --var TORCHQUANT_FP8_KSPLIT --path auto --values auto,2,auto,2 --shapes 128256x4096,128256x8192 --ms 1,4,8
ab i8_deep --op int8 --var TORCHQUANT_INT8_GEMV_DEEP --path auto --values auto,1,auto,1 --shapes 128256x4096,128256x8192,28672x4096,14336x4096 --ms 1,8
for dt in bf16 fp16; do
  PYTHONPATH=. timeout 60 $PY benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,8 --var TORCHQUANT_FP8_XRING --modes auto,1,auto,1 --dtype $dt --out "$R/layer_xr_$dt.csv" > "$R/layer_xr_$dt.log" 2>&1
  echo "layer xr $dt rc=$?"; grep fused "$R/layer_xr_$dt.log"
done
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
