#!/usr/bin/env bash
# Session 2026-12-03e call 1: branch wip/sp24-2cta (f371f59), the two-CTAs-per-SM decode tiles
# (2:4 16c1x2, int8 64x128x2), forced only. Sparse + int8 sources: the new tiles' tests, memcheck,
# same-build tile A/Bs (16c1 vs 16c1x2; 64x128c1 vs 64x128x2) on the decode shapes, with cuBLAS.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
git log --oneline -1 > "$R/commit.txt" 2>/dev/null
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/sparse/sparse24.cu,csrc/sparse/sparse24_gemm_sm90a.cu,csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  timeout 260 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
SH=28672x8192,57344x8192,128256x4096,14336x4096
run() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  local t=$(date +%s)
  PYTHONPATH=. timeout $to $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - t )) s"
}
run sp_bf16 50 --op sparse24 --var TORCHQUANT_SP24_WGMMA_TILE --path wgmma --values 16c1,16c1x2 --shapes $SH --ms 1,8,16 --dense
run sp_i8 40 --op sparse24_int8 --var TORCHQUANT_SP24_WGMMA_TILE --path wgmma --values 16c1,16c1x2 --shapes $SH --ms 1,8,16
run i8 50 --op int8 --var TORCHQUANT_INT8_WGMMA_TILE --path wgmma --values 64x128c1,64x128x2 --shapes $SH --ms 1,8,16,32 --dense
t0=$(date +%s)
timeout -k 5 70 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_sparse24_wgmma_cuda.py tests/test_int8_wgmma_cuda.py -k "16c1x2 or 64x128x2" > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -8; tail -n 1 "$R/tests.log"
t0=$(date +%s)
PYTHONPATH=. timeout 80 compute-sanitizer --tool memcheck --print-limit 20 $PY benchmarks/micro/sp24_wgmma_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 "$R/memcheck.log"
for f in sp_bf16 sp_i8 i8; do grep "M=" "$R/$f.log" | sed "s/^/$f /"; done
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
