#!/usr/bin/env bash
# Session 2026-12-03e, prepared for the next GPU session (no device time was left): the int8 2:4
# K split with 2 ranks (never measured; the 4-rank split lost to the unsplit tile), the fused
# layer re-timed with the K-split rules, and compute-sanitizer over the final build.
# Run from the repository root on the device with carry ["ab_run"] after copying it there.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
TORCHQUANT_ONLY_SOURCES=csrc/sparse/sparse24.cu,csrc/sparse/sparse24_gemm_sm90a.cu,csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  timeout 260 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$?"
run() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout $to $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" 2>&1 | tee "$R/$name.log" | grep "M="
}
run i8_ks 30 --op sparse24_int8 --var TORCHQUANT_SP24_WGMMA_TILE --path wgmma --values 16c1,16c1k --env TORCHQUANT_SP24_KSPLIT=2 --shapes 4096x4096,4096x14336,1024x4096,6144x4096 --ms 8,16
PYTHONPATH=. timeout 50 $PY benchmarks/micro/pdl_ab.py --formats sparse24,int8_sparse24,int8 --ms 1,8,16 --modes auto --out "$R/layer_sp.csv" 2>&1 | tee "$R/layer_sp.log" | tail -n 9
PYTHONPATH=. timeout 80 compute-sanitizer --tool memcheck --print-limit 20 $PY benchmarks/micro/sp24_wgmma_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; tail -n 2 "$R/memcheck.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
