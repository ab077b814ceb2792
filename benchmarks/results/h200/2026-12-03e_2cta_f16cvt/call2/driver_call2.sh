#!/usr/bin/env bash
# Session 2026-12-03e call 2: main with the 16c1x2 tile in the 2:4 auto rule (two CTAs per SM
# when 128-feature tiles number in (SMs, 2 SMs]). Sparse + int8 sources: the sparse tests (all),
# memcheck, auto against bf16 cuBLAS and dense int8, tile A/B at M = 2 / 4 and on 28672x4096,
# the fused Llama-3-8B layer chain.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/sparse/sparse24.cu,csrc/sparse/sparse24_gemm_sm90a.cu,csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  timeout 260 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout -k 5 100 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_sparse24_wgmma_cuda.py tests/test_sparse24.py > "$R/tests.log" 2>&1
echo "sparse tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -8; tail -n 1 "$R/tests.log"
t0=$(date +%s)
PYTHONPATH=. timeout 80 compute-sanitizer --tool memcheck --print-limit 20 $PY benchmarks/micro/sp24_wgmma_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 2 "$R/memcheck.log"
SH=28672x8192,28672x4096,57344x8192,128256x4096,14336x4096,6144x4096
run() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  local t=$(date +%s)
  PYTHONPATH=. timeout $to $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - t )) s"
}
run bf16_auto 50 --op sparse24 --var path --values auto --shapes $SH --ms 1,2,4,8,16 --dense
run i8_auto 40 --op sparse24_int8 --var path --values auto --shapes $SH --ms 1,2,4,8,16
run i8_dense 40 --op int8 --var path --values auto --shapes $SH --ms 1,2,4,8,16
run tiles 40 --op sparse24 --var TORCHQUANT_SP24_WGMMA_TILE --path wgmma --values 16c1,16c1x2 --shapes 28672x8192,28672x4096 --ms 2,4,8
run tiles_i8 40 --op sparse24_int8 --var TORCHQUANT_SP24_WGMMA_TILE --path wgmma --values 16c1,16c1x2 --shapes 28672x8192,28672x4096 --ms 2,4,8
t0=$(date +%s)
PYTHONPATH=. timeout 60 $PY benchmarks/micro/pdl_ab.py --formats sparse24,int8_sparse24,int8 --ms 1,8,16 --modes auto --out "$R/layer.csv" > "$R/layer.log" 2>&1
echo "layer rc=$? $(( $(date +%s) - t0 )) s"; tail -n 9 "$R/layer.log"
for f in bf16_auto i8_auto i8_dense tiles tiles_i8; do grep "M=" "$R/$f.log" | sed "s/^/$f /"; done
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
