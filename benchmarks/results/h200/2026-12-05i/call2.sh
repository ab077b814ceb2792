#!/usr/bin/env bash
# 2026-12-05i call 2: benchmarks/micro/nvfp4_direct_shape.cu (built here with nvcc 13.0,
# -O3 -arch=sm_90, carried as .prebuilt/probe/nvfp4_direct_shape): the direct GEMV's load depth
# against occupancy (U = 2..8, 3 or 2 blocks per SM, the next round's loads issued before the
# decode, a persistent grid), on whichever card comes; call 1 found the extension's direct GEMV
# (U = 2, 3 blocks per SM) slower than layout 1's GEMVs on an H200's large layers. Then the
# extension's four builds of it (TORCHQUANT_NVFP4_DIRECT 1..4: U 2 / 3 blocks, U 3 / 3, U 4 / 2,
# U 2 pipelined / 2) beside layout 1's auto path, in one process.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
PROBE_VARIANTS=U=2,U=3/3,U=3,U=4,U=6,U=8,U=2pipe,U=2pipe/3,U=3pipe,U=4pipe,U=2p,U=4p \
  timeout 240 .prebuilt/probe/nvfp4_direct_shape 28672x8192 128256x4096 14336x4096 4096x4096 > "$R/direct.log" 2>&1
echo "probe rc=$? $(( $(date +%s) - t0 )) s"; grep -E "==|us" "$R/direct.log" | sed -E 's/  +/ /g' | cut -c1-90
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto \
  --shapes 28672x8192,128256x4096,14336x4096,4096x4096,6144x4096,4096x14336 --var TORCHQUANT_NVFP4_DIRECT \
  --values 1,2,3,4,1,2,3,4 --ms 1,4,8 --out "$R/direct_u.csv" > "$R/direct_u.log" 2>&1
echo "direct_u rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/direct_u.log"
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 1 --path auto \
  --shapes 28672x8192,128256x4096,14336x4096,4096x4096,6144x4096,4096x14336 --var TORCHQUANT_NVFP4_DIRECT \
  --values auto,auto --ms 1,4,8 --out "$R/layout1.csv" > "$R/layout1.log" 2>&1
echo "layout1 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "nvfp4" "$R/layout1.log"
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
