#!/usr/bin/env bash
# 2026-12-04f call 3: full sm_90 build with the wgmma GEMV's producer loading x one stage ahead
# (TORCHQUANT_NVFP4_WGMMA_XPF, runtime; producer / consumer registers 64 / 80), auto to M = 32,
# QuantLinear nvfp4 M <= 32 on the op. The CUDA tests of every format, then the A/B of XPF
# (the op alone and the Llama-3-8B layer chain) and the two-CTA tiles at the new split.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
timeout 250 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"; grep -i "spill stores\|C75" "$R/build.log" | grep -v " 0 bytes spill" | head -3
t1=$(date +%s)
timeout -k 5 220 $PY -m pytest -q --timeout=120 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_fp8_wgmma_cuda.py \
  tests/test_int8_cuda.py tests/test_int8_wgmma_cuda.py tests/test_pdl_cuda.py tests/test_nn.py tests/test_nvfp4_cuda.py \
  tests/test_nvfp4_wgmma_cuda.py tests/test_sparse24.py tests/test_sparse24_wgmma_cuda.py tests/test_ops.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
ab() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout "$to" $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"
}
ab xpf 90 --op nvfp4 --act-dtype bf16 --path wgmma --var TORCHQUANT_NVFP4_WGMMA_XPF --values 1,0,1,0 \
  --shapes 28672x8192,128256x4096,28672x4096,4096x14336,4096x4096 --ms 1,8,16
ab tile 50 --op nvfp4 --act-dtype bf16 --path wgmma --var TORCHQUANT_NVFP4_WGMMA_TILE --values 16x2s3,16x2s4 \
  --shapes 28672x8192,128256x4096,28672x4096 --ms 8,16
PYTHONPATH=. timeout 90 $PY benchmarks/micro/pdl_ab.py --formats nvfp4 --ms 8,16,32 \
  --var TORCHQUANT_NVFP4_WGMMA_XPF --modes 1,0,1,0 --out "$R/chain.csv" > "$R/chain.log" 2>&1
echo "chain rc=$?"; tail -n 4 "$R/chain.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
gzip "$R/build.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
