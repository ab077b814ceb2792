#!/usr/bin/env bash
# 2026-12-05i call 2. (1) benchmarks/micro/nvfp4_direct_shape.cu (built on the development
# machine with nvcc 13.0, -O3 -arch=sm_90, carried as .prebuilt/probe/nvfp4_direct_shape): the
# direct GEMV's load depth against occupancy (U = 2..8, 3 or 2 blocks per SM, the next round's
# loads issued before the decode, a persistent grid); call 1 found the extension's direct GEMV
# (U = 2, 3 blocks per SM) slower than layout 1's GEMVs on an H200's large layers. (2) The
# extension's four builds of it (TORCHQUANT_NVFP4_DIRECT 1..4: U 2 / 3 blocks, U 3 / 3, U 4 / 2,
# U 2 pipelined / 2), one process. (3) Layout 1 against layout 3 on the mma / wgmma GEMVs (direct
# off), one process. (4) The nvfp4 CUDA tests (layout 3 on every bf16 decoding kernel).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
PROBE_VARIANTS=U=2,U=3/3,U=3,U=4,U=6,U=8,U=2pipe,U=2pipe/3,U=3pipe,U=4pipe,U=2p,U=4p \
  timeout 200 .prebuilt/probe/nvfp4_direct_shape 28672x8192 128256x4096 14336x4096 4096x4096 > "$R/direct.log" 2>&1
echo "probe rc=$? $(( $(date +%s) - t0 )) s"; grep -E "==|us" "$R/direct.log" | sed -E 's/  +/ /g' | cut -c1-90
SH=28672x8192,128256x4096,14336x4096,4096x4096,6144x4096,4096x14336
PYTHONPATH=. timeout 110 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT --values 1,2,3,4,1,2,3,4 --ms 1,4,8 --out "$R/direct_u.csv" > "$R/direct_u.log" 2>&1
echo "direct_u rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/direct_u.log"
PYTHONPATH=. timeout 70 $PY benchmarks/micro/env_ab.py --op nvfp4 --path auto --shapes $SH --env TORCHQUANT_NVFP4_DIRECT_MAX_M=-1 \
  --var layout --values 1,3,1,3 --ms 1,8,16 --out "$R/layout13_nodirect.csv" > "$R/layout13_nodirect.log" 2>&1
echo "layout13 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "nvfp4" "$R/layout13_nodirect.log"
el=$(( $(date +%s) - t0 )); left=$(( 575 - el ))
timeout $left $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_nvfp4_layout.py \
  tests/test_nvfp4_wgmma_cuda.py tests/test_ops.py tests/test_nn.py > "$R/tests_nvfp4.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_nvfp4.log"; grep -E "^FAILED" "$R/tests_nvfp4.log" | head -8
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
