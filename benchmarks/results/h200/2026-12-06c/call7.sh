#!/usr/bin/env bash
# 2026-12-06c call 7 (csrc with direct builds 7-9): the probe's xr form (calls 5-6, H100: on the
# 256-block grids 4096x4096 M = 1 4.9 us against 6.0, 4096x14336 M = 8 15.4 against 20.0) in the
# extension. (1) the nvfp4 direct tests (builds 7-9 give the default build's bits); (2) the
# builds 1 / 3 / 4 (what direct_build picks today) against 7 / 8 / 9 on path direct, six Llama-3
# layers, M = 1 / 2 / 4 / 8, two rounds; (3) on an H200 also the ring / wgmma GEMVs (auto with the
# direct rule off) on the same shapes, the other side of direct_rule there.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
SH=4096x4096,6144x4096,4096x14336,14336x4096,28672x4096,28672x8192
$PY benchmarks/micro/device_caps.py 2>&1 | tee "$R/caps.log"
timeout 120 $PY -m pytest -q -x -p no:cacheprovider -n 8 tests/test_nvfp4_cuda.py -k direct > "$R/tests_direct.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_direct.log"; grep -E "^FAILED|Error" "$R/tests_direct.log" | head -5
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT --values 1,3,4,7,8,9,1,3,4,7,8,9 --ms 1,2,4,8 --out "$R/direct_xr.csv" > "$R/direct_xr.log" 2>&1
echo "direct_xr rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/direct_xr.log" | cut -c1-150
if [[ "$gpu" == *H200* ]]; then
  PYTHONPATH=. timeout 80 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto --shapes $SH \
    --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values -1,-1 --ms 1,2,4,8 --out "$R/ring.csv" > "$R/ring.log" 2>&1
  echo "ring rc=$? $(( $(date +%s) - t0 )) s"; grep -E "nvfp4" "$R/ring.log" | cut -c1-150
fi
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
