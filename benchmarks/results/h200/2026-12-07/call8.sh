#!/usr/bin/env bash
# 2026-12-07h call 8, either card: the tiled fp8_block weight (csrc/fp8/fp8_tiles.h; nvfp4's
# layout-4 lever for fp8's direct GEMV, docs/fp8_gemv.md "The tiled weight"). First its GPU tests
# (every direct build's and the ring kernel's tiled forms against the row-major bits, the op on
# CUDA, the kernel names, views, graph replay, refusals) with the direct GEMV's existing tests and
# nvfp4 layout 4's; then the A/B, paths direct and mma (the ring kernel) on the row-major / tiled
# weight (the tiling's own effect, same kernels), cold L2, then from L2 (--warm, shapes that fit:
# the SM side), then path auto on both beside bf16 cuBLAS (on the H200 auto runs the ring / wgmma
# GEMVs on the row-major weight and the ring kernel on the tiled one: the question issue 4 asks);
# and nvfp4's ring GEMV on layout 3 / 4 (its tiled form: issue 5's H200 kernel at M = 1..4). On an H200 call 6 (nvfp4 layout 4's A/B, then call1.sh,
# the owed checks) follows in what is left of CAP.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
CAP=${2:-540}
. benchmarks/call_setup.sh "$1"
timeout 150 $PY -m pytest -q -rs -p no:cacheprovider -n 16 tests/test_fp8_cuda.py tests/test_fp8_tiles.py \
  tests/test_nvfp4_cuda.py tests/test_nvfp4_layout.py tests/test_ops.py \
  -k "tiled or tile_cuda or direct or relayout or layout_errors or opcheck or fake" > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -8
SH=28672x8192,128256x4096,14336x4096,4096x4096
for P in direct mma; do
  timeout 100 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op fp8 --var tiled --values 0,1,0,1 --path $P \
    --shapes $SH --ms 1,8,16 --out "$R/fp8_tiled_$P.csv" > "$R/fp8_tiled_$P.log" 2>&1
  echo "fp8 $P rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^fp8|ceiling" "$R/fp8_tiled_$P.log"
  timeout 40 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op fp8 --var tiled --values 0,1,0,1 --path $P --warm \
    --shapes 4096x4096,8192x4096 --ms 1,8 --out "$R/fp8_tiled_${P}_warm.csv" > "$R/fp8_tiled_${P}_warm.log" 2>&1
  echo "fp8 $P warm rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^fp8" "$R/fp8_tiled_${P}_warm.log"
done
# nvfp4: the ring GEMV on layout 3 / layout 4 (its tiled form, docs/nvfp4_gemv.md 41), path mma
timeout 90 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op nvfp4 --var layout --values 3,4,3,4 --path mma \
  --shapes 28672x8192,128256x4096,14336x4096,4096x4096 --ms 1,4,8 --out "$R/nv_ring_tiled.csv" > "$R/nv_ring_tiled.log" 2>&1
echo "nvfp4 ring rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^nvfp4" "$R/nv_ring_tiled.log"
timeout 120 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op fp8 --var tiled --values 0,1,0,1 --path auto --dense \
  --shapes 28672x8192,128256x4096,14336x4096,4096x14336,4096x4096 --ms 1,2,4,8,16 --out "$R/fp8_tiled_auto.csv" \
  > "$R/fp8_tiled_auto.log" 2>&1
echo "fp8 auto rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^fp8" "$R/fp8_tiled_auto.log"
if (( CAP - ($(date +%s) - t0) > 200 )); then  # memcheck over the tiled forms (and build 3's row-major form)
  PYTHONPATH=. timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 $PY \
    benchmarks/micro/fp8_direct_memcheck.py 3 > "$R/memcheck.log" 2>&1
  echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 3 "$R/memcheck.log"
fi
tar czf "$OUT/f.tgz" -C "$OUT" r && rm -rf "$R"
left=$(( CAP - ($(date +%s) - t0) ))
if [[ "$gpu" == *H200* && $left -gt 150 ]]; then bash benchmarks/results/h200/2026-12-07/call6.sh "$OUT" $left; fi
echo "elapsed $(( $(date +%s) - t0 )) s"
