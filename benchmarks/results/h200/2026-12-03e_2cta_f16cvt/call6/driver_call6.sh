#!/usr/bin/env bash
# Session 2026-12-03e call 6 (trimmed to the device time left): the K-split rules after call 5
# (split only 16-bit, at most a quarter as many feature tiles as SMs, ks the largest keeping the
# grid within half the SMs and placeable at once; int8 auto takes the unsplit 16-token tile from
# M = 8). Sparse sources: the sparse wgmma tests, the automatic ks against forced ones, auto
# against mma.sp on the small layers. Results printed as they come (a cut-off run keeps them).
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/sparse/sparse24.cu,csrc/sparse/sparse24_gemm_sm90a.cu,csrc/int8/int8_matmul.cu \
  timeout 200 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
run() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  local t=$(date +%s)
  PYTHONPATH=. timeout $to $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" 2>&1 | tee "$R/$name.log" | grep "M="
  echo "$name $(( $(date +%s) - t )) s"
}
run ks_n 20 --op sparse24 --var TORCHQUANT_SP24_KSPLIT --path wgmma --values auto,2,4 --env TORCHQUANT_SP24_WGMMA_TILE=16c1k --shapes 4096x4096,4096x14336,1024x4096 --ms 8
run paths 25 --op sparse24 --var path --values auto,mma --shapes 4096x4096,4096x14336,1024x4096,6144x4096 --ms 2,8,16 --dense
run paths_i8 20 --op sparse24_int8 --var path --values auto,mma --shapes 4096x4096,4096x14336,1024x4096 --ms 4,8,16
t0=$(date +%s)
timeout -k 5 60 $PY -m pytest -q --timeout=50 -p no:cacheprovider -n 16 tests/test_sparse24_wgmma_cuda.py > "$R/tests.log" 2>&1
echo "sparse wgmma tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
