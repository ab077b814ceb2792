#!/usr/bin/env bash
# Session 2026-12-03f call 3: fp8_block_gemv path "wgmma" with tile 16x2 always, the auto rule
# (M = 9..16 on wide layers), the bf16 conversion A/B (re-seat vs through fp32), the auto tables
# fp16 / bf16, the path A/B at M = 9 / 12 / 16, memcheck, the fused layer; fp8 tests first.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu \
  timeout 240 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -E "error|spill" "$R/build.log" | grep -v " 0 bytes spill" | head -5
t0=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests.log" 2>&1
echo "fp8 tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
run() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  local t=$(date +%s)
  PYTHONPATH=. timeout $to $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" 2>&1 | tee "$R/$name.log" | grep "M="
  echo "$name $(( $(date +%s) - t )) s"
}
run cvt 40 --op fp8 --var TORCHQUANT_FP8_WGMMA_BF16 --path wgmma --values reseat,f32 --shapes 28672x8192,128256x4096,14336x4096,10240x8192,8192x28672 --ms 1,16
SH=4096x4096,6144x4096,14336x4096,28672x4096,4096x14336,8192x8192,10240x8192,28672x8192,57344x8192,8192x28672,128256x4096
run p16 60 --op fp8 --act-dtype fp16 --var path --values auto,mma,wgmma --shapes $SH --ms 1,4,8,9,16
run pb16 60 --op fp8 --var path --values auto,mma,wgmma --shapes $SH --ms 1,4,8,9,16
run fp8_f16 60 --op fp8 --act-dtype fp16 --var path --values auto --shapes $SH --ms 1,2,4,8,16 --dense > /dev/null
run fp8_bf16 60 --op fp8 --act-dtype bf16 --var path --values auto --shapes $SH --ms 1,2,4,8,16 --dense > /dev/null
t0=$(date +%s)
PYTHONPATH=. timeout 100 compute-sanitizer --tool memcheck --print-limit 20 $PY benchmarks/micro/fp8_wgmma_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 2 "$R/memcheck.log"
for dt in fp16 bf16; do
  t0=$(date +%s)
  PYTHONPATH=. timeout 60 $PY benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,8,16 --modes auto,smem --dtype $dt --out "$R/layer_$dt.csv" > "$R/layer_$dt.log" 2>&1
  echo "layer $dt rc=$? $(( $(date +%s) - t0 )) s"; tail -n 4 "$R/layer_$dt.log"
done
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
