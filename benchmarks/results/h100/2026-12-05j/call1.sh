#!/usr/bin/env bash
# Run in 2026-12-05j as call 1 on an H100 (csrc 86de0cd, the prebuilt of that commit).
# 2026-12-05i call 2 (not run in 2026-12-05i: no device after call 1; the next session's first
# call, at 61d9c98 or later with csrc unchanged). Correctness first, then the A/Bs:
# (1) the nvfp4 CUDA tests and test_nn.py: layout 3 on every bf16 decoding kernel (mma / wgmma
#     GEMVs with x unpermuted, the decoding GEMM's bf16_l3_adjacent), direct_rule, the direct
#     GEMV's load-depth builds (TORCHQUANT_NVFP4_DIRECT=1..6, same bits);
# (2) compute-sanitizer memcheck of every direct build;
# (3) the six direct builds beside each other, layout 3, path direct forced on every M (knob),
#     one process;
# (4) layout 1 against layout 3 on the mma / wgmma GEMVs (direct off), one process.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
timeout 200 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py tests/test_nvfp4_layout.py \
  tests/test_nvfp4_wgmma_cuda.py tests/test_ops.py tests/test_nn.py > "$R/tests_nvfp4.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_nvfp4.log"; grep -E "^FAILED" "$R/tests_nvfp4.log" | head -8
timeout 100 compute-sanitizer --tool memcheck --print-limit 10 env PYTHONPATH=. $PY benchmarks/micro/nvfp4_direct_memcheck.py > "$R/memcheck_direct.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 2 "$R/memcheck_direct.log"
SH=28672x8192,128256x4096,14336x4096,4096x4096,6144x4096,4096x14336
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT --values 1,2,3,4,5,6,1,2,3,4,5,6 --ms 1,4,8 --out "$R/direct_u.csv" > "$R/direct_u.log" 2>&1
echo "direct_u rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/direct_u.log"
PYTHONPATH=. timeout 70 $PY benchmarks/micro/env_ab.py --op nvfp4 --path auto --shapes $SH --env TORCHQUANT_NVFP4_DIRECT_MAX_M=-1 \
  --var layout --values 1,3,1,3 --ms 1,8,16 --out "$R/layout13_nodirect.csv" > "$R/layout13_nodirect.log" 2>&1
echo "layout13 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "nvfp4" "$R/layout13_nodirect.log"
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
