#!/usr/bin/env bash
# 2026-12-07g call 7, either card: the direct GEMV's builds on layout 4 against layout 3's.
# Call 6 (an H100) timed layout 4 in the builds direct_build picks for layout 3: 3-6 % faster at
# M = 1..8 on the large grids, 10-16 % at M = 16, but slower on 4096x14336 (long rows, 256 blocks;
# 3-9 %) and 4096x4096 at M = 8. Here every build that has a tiled form, forced
# (TORCHQUANT_NVFP4_DIRECT), on both layouts, path direct, cold L2, graph replay: is another build
# better for the tiled operands (as the probe's U = 1 form was with the weight in L2)?
# On an H200 the rest of call1.sh follows in what is left of CAP.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
CAP=${2:-480}
. benchmarks/call_setup.sh "$1"
SH=28672x8192,4096x14336,4096x4096,14336x4096,128256x4096
for L in 4 3; do
  timeout 100 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op nvfp4 --layout $L --var TORCHQUANT_NVFP4_DIRECT \
    --values auto,7,8,10,12 --path direct --shapes $SH --ms 1,4,8 --out "$R/b18_l$L.csv" > "$R/b18_l$L.log" 2>&1
  echo "layout $L M=1..8 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^nvfp4" "$R/b18_l$L.log"
  timeout 60 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op nvfp4 --layout $L --var TORCHQUANT_NVFP4_DIRECT \
    --values auto,13,14,15 --path direct --shapes $SH --ms 12,16 --out "$R/b916_l$L.csv" > "$R/b916_l$L.log" 2>&1
  echo "layout $L M=12,16 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^nvfp4" "$R/b916_l$L.log"
done
tar czf "$OUT/b.tgz" -C "$OUT" r && rm -rf "$R"
left=$(( CAP - ($(date +%s) - t0) ))
if [[ "$gpu" == *H200* && $left -gt 120 ]]; then bash benchmarks/results/h200/2026-12-07/call1.sh "$OUT" $left; fi
echo "elapsed $(( $(date +%s) - t0 )) s"
