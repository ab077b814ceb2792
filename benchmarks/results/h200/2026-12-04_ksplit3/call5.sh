#!/usr/bin/env bash
# 2026-12-04 call 5: the nvfp4 K-split rule of call 4 narrowed to tiles of <= 4 rows and KS >= 2 (where it won)
# (the working tree's mma_config_one_pass; TORCHQUANT_NVFP4_KS_RULE=waves is the rule before),
# A/B in one process, M = 1..8 (28672x4096, 4096x4096: unchanged, as controls); the layer chain; the
# nvfp4 CUDA tests.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/nvfp4/nvfp4_gemv.cu \
  timeout 200 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -i "spill\|error" "$R/build.log" | head -5
ab() { local name=$1; shift; PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
ab rule --op nvfp4 --path auto --var TORCHQUANT_NVFP4_KS_RULE --values auto,waves,auto,waves \
  --shapes 6144x4096,14336x4096,28672x4096,4096x4096 --ms 1,2,4,8
PYTHONPATH=. timeout 120 $PY benchmarks/micro/pdl_ab.py --formats nvfp4 --ms 1,2,4,8 \
  --var TORCHQUANT_NVFP4_KS_RULE --modes auto,waves,auto,waves --out "$R/layer.csv" > "$R/layer.log" 2>&1
echo "layer rc=$?"; tail -n 4 "$R/layer.log"
timeout -k 3 200 $PY -m pytest -q --timeout=120 -p no:cacheprovider -n 8 tests/test_nvfp4_cuda.py \
  > "$R/tests_nvfp4.log" 2>&1
echo "nvfp4 tests rc=$?"; grep -E "^FAILED|^ERROR" "$R/tests_nvfp4.log" | head -5; tail -n 1 "$R/tests_nvfp4.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
