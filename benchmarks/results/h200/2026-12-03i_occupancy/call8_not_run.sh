#!/usr/bin/env bash
# Prepared in 2026-12-03i, NOT RUN (the session's device time was spent). It needs the
# three-rank change of commit e70d389 re-applied first (`git show e70d389 -- csrc tests | git
# apply`; main reverted it untested).
# The 2:4 wgmma decode tile with K split over a cluster of THREE CTAs where
# the old rule stopped at two (17..33 feature tiles: the 4096-feature layers). Call 7 found only
# 30 clusters of four one-CTA-per-SM blocks fit the H200 at once, so 4 ranks on 32 tiles ran a
# second wave. A/B in one process (TORCHQUANT_SP24_KSPLIT3 unset = three ranks, -1 = two), then
# the K-split tests (ks = 3 forced among them), then the int8 kind and the layer chain.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/sparse/sparse24.cu,csrc/sparse/sparse24_gemm_sm90a.cu \
  timeout 170 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
ab() { local name=$1; shift; PYTHONPATH=. timeout 45 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
ab k3_bf16 --op sparse24 --path auto --var TORCHQUANT_SP24_KSPLIT3 --values auto,-1,auto,-1 \
  --shapes 4096x14336,4096x4096 --ms 2,8,16 --dense
timeout -k 3 40 $PY -m pytest -q --timeout=30 -p no:cacheprovider -n 8 tests/test_sparse24_wgmma_cuda.py -k "ksplit" \
  > "$R/tests_ksplit.log" 2>&1
echo "ksplit tests rc=$?"; grep -E "^FAILED|^ERROR" "$R/tests_ksplit.log" | head -5; tail -n 1 "$R/tests_ksplit.log"
ab k3_i8 --op sparse24_int8 --path auto --var TORCHQUANT_SP24_KSPLIT3 --values auto,-1,auto,-1 \
  --shapes 4096x14336,4096x4096 --ms 8,16
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
