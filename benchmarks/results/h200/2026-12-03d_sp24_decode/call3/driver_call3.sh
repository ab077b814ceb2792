#!/usr/bin/env bash
# Session 2026-12-03d call 3: the sparse-wgmma k-loop with its metadata registers double-
# buffered and pinned until the wait that retires their group (call 2's 64-token wide tile
# failures), the wide 64c1 back, 64c1n (64-byte stages) beside it, the new auto rule. Sparse +
# int8 sources: tests (twice), memcheck, auto paths against bf16 cuBLAS / dense int8, forced
# 64-token tiles, M = 2048 (the prefill tiles' k-loop changed too), the fused layer chain.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/sparse/sparse24.cu,csrc/sparse/sparse24_gemm_sm90a.cu,csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  timeout 260 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
for r in 1 2; do
  t0=$(date +%s)
  timeout -k 5 100 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_sparse24_wgmma_cuda.py > "$R/tests$r.log" 2>&1
  echo "sp24 wgmma tests round $r rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests$r.log" | head -8; tail -n 1 "$R/tests$r.log"
done
t0=$(date +%s)
timeout -k 5 120 $PY -m pytest -q --timeout=100 -p no:cacheprovider -n 16 tests/test_sparse24.py > "$R/tests_sp24.log" 2>&1
echo "test_sparse24 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_sp24.log" | head -8; tail -n 1 "$R/tests_sp24.log"
t0=$(date +%s)
PYTHONPATH=. timeout 120 compute-sanitizer --tool memcheck --print-limit 20 $PY benchmarks/micro/sp24_wgmma_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 "$R/memcheck.log"
SH=28672x8192,14336x4096,4096x14336,4096x4096,128256x4096,6144x4096,28672x4096,57344x8192,8192x8192,10240x8192
run() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  local t=$(date +%s)
  PYTHONPATH=. timeout $to $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - t )) s"
}
run bf16_auto 60 --op sparse24 --var path --values auto --shapes $SH --ms 1,2,4,8,16,32,64 --dense
run i8_auto 45 --op sparse24_int8 --var path --values auto --shapes $SH --ms 1,2,4,8,16,32,64
run i8_dense 40 --op int8 --var path --values auto --shapes $SH --ms 1,2,4,8,16,32,64
run tiles64 30 --op sparse24 --var TORCHQUANT_SP24_WGMMA_TILE --path wgmma --values 64c1,64c1n --shapes 28672x8192,4096x4096 --ms 33,48,64
run tiles64_i8 30 --op sparse24_int8 --var TORCHQUANT_SP24_WGMMA_TILE --path wgmma --values 64c1,64c1n --shapes 28672x8192,4096x4096 --ms 33,48,64
run m2048 40 --op sparse24 --var path --values wgmma --shapes 28672x8192,4096x4096 --ms 2048 --dense
run m2048_i8 30 --op sparse24_int8 --var path --values wgmma --shapes 28672x8192,4096x4096 --ms 2048
t0=$(date +%s)
PYTHONPATH=. timeout 60 $PY benchmarks/micro/pdl_ab.py --formats sparse24,int8_sparse24,int8 --ms 1,8,16 --modes auto --out "$R/layer.csv" > "$R/layer.log" 2>&1
echo "layer rc=$? $(( $(date +%s) - t0 )) s"; tail -n 14 "$R/layer.log"
for f in bf16_auto i8_auto i8_dense tiles64 tiles64_i8 m2048 m2048_i8; do grep "M=" "$R/$f.log" | sed "s/^/$f /"; done
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
