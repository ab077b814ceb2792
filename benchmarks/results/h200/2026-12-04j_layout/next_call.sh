#!/usr/bin/env bash
# Run 2026-12-05 (results: ../2026-12-05_layout/call1). Written 2026-12-04j, a session with no device lent: the first GPU run of nvfp4
# word layouts 1 and 2, the bf16 / fp16 decode orders (csrc/nvfp4/nvfp4_layout.h, docs/nvfp4_gemv.md 23). Builds the two nvfp4 sources only
# (skipped when a build is already there: a second call on a warm machine), runs the nvfp4 CUDA
# tests (layout-1 tests included; the kernel template grew an argument), memcheck of every
# layout-1 form, then the timing A/B: nvfp4_gemv layout 0 vs 1 on the layer and anchor shapes at
# M = 1..16 (mma, and the wgmma GEMV at 5..16), the Llama-3-8B layer chain through the raw op and
# through QuantLinear (bench_e2e's "QuantLinear nvfp4 layout1" row). Plain-file logs, so a
# timeout still returns them. ~10 min in all: if a call is cut at 600 s, run the rest (the A/Bs
# skip the build on a warm machine) in a second call.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
# a carried build of these sources (benchmarks/prebuilt.py, carry=[".prebuilt"]) skips the build
if ! ls torchquant/_C_sm90a*.so > /dev/null 2>&1 && ! $PY benchmarks/prebuilt.py use; then
  TORCHQUANT_ONLY_SOURCES=csrc/nvfp4/nvfp4_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu timeout 200 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
  echo "build rc=$? $(( $(date +%s) - t0 )) s"
  grep -E "spill|stack frame" "$R/build.log" | grep -v " 0 bytes spill stores, 0 bytes spill loads" | grep -v "0 bytes stack frame" > "$R/spills.txt"
  echo "nonzero spill lines: $(wc -l < "$R/spills.txt")"
fi
# SASS of the x-resident kernel's loop, bf16 layout 0 vs 1 and fp16 0 vs 2 (unsplit; the last
# template argument)
for TL in 13__nv_bfloat16:0 13__nv_bfloat16:1 6__half:0 6__half:2; do
  T=${TL%%:*}; L=${TL##*:}
  $PY benchmarks/micro/sass_tools.py loop torchquant/_C.*so "nvfp4_gemv_mma_kernelI${T}Li1ELb1ELb0ELb0ELb1ELi0ELi${L}E" --with HMMA > "$R/sass_loop_${T}_l$L.txt" 2>&1
  tail -n 2 "$R/sass_loop_${T}_l$L.txt"
done
timeout 200 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_layout.py tests/test_nvfp4_cuda.py tests/test_nvfp4_wgmma_cuda.py tests/test_nn.py -k "nvfp4 or layout" > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 "$R/tests.log"
PYTHONPATH=. timeout 120 compute-sanitizer --print-limit 20 --tool memcheck $PY benchmarks/micro/nvfp4_layout_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; tail -n 2 "$R/memcheck.log"
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op nvfp4 --var layout --values 0,1,0,1 --path mma \
  --shapes 28672x8192,128256x4096,4096x4096,6144x4096,28672x4096,4096x14336 --ms 1,2,4,8,16 \
  --out "$R/layout_ab.csv" > "$R/layout_ab.log" 2>&1
echo "layout A/B rc=$?"; cat "$R/layout_ab.log"
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op nvfp4 --var layout --values 0,1,0,1 --path wgmma \
  --shapes 28672x8192,128256x4096,4096x4096,28672x4096 --ms 5,8,16 \
  --out "$R/layout_ab_wgmma.csv" > "$R/layout_ab_wgmma.log" 2>&1
echo "layout A/B wgmma rc=$?"; cat "$R/layout_ab_wgmma.log"
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op nvfp4 --var layout --values 0,2,0,2 --path mma --act-dtype fp16 \
  --shapes 28672x8192,128256x4096,4096x4096 --ms 1,2,4 \
  --out "$R/layout_ab_fp16.csv" > "$R/layout_ab_fp16.log" 2>&1
echo "layout A/B fp16 rc=$?"; cat "$R/layout_ab_fp16.log"
PYTHONPATH=. timeout 90 $PY benchmarks/micro/nvfp4_layout_chain.py --ms 1,2,4,8,16 --out "$R/chain.csv" > "$R/chain.log" 2>&1
echo "chain rc=$?"; cat "$R/chain.log"
PYTHONPATH=. timeout 60 $PY benchmarks/micro/nvfp4_layout_chain.py --ms 1,8 --dtype fp16 --out "$R/chain_fp16.csv" > "$R/chain_fp16.log" 2>&1
echo "chain fp16 rc=$?"; cat "$R/chain_fp16.log"
# the issue-7 metric: the Llama-3-8B layer through QuantLinear, nvfp4 layout 0 vs 1 (other
# formats' rows are n/a in this nvfp4-only build)
TORCHQUANT_COMMIT=${TORCHQUANT_COMMIT:-unknown} timeout 150 $PY benchmarks/bench_e2e.py --ms 1,2,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$?"; grep -E "nvfp4|bf16 F.linear" "$R/e2e.log" | head -20
echo "elapsed $(( $(date +%s) - t0 )) s"
