#!/usr/bin/env bash
# 2026-12-07f call 5, either card. On an H200: call1.sh (every check owed there) in CAP - 30 s,
# then the probe. The probe (~10 s; the only step on any other card): call 4's tiled forms (an
# H100 found them 13 % faster than build 8's form with the weight in L2 at M = 1 and 4-16 % cold;
# docs/nvfp4_gemv.md 39) and, not yet run anywhere, C<P8>: each warp's pieces contiguous and its
# scales loaded once and shuffled (the tiled scales' gain without a storage change?), on
# 28672x8192 hot (24 MB in L2) and cold, 4096x4096 cold.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
OUT=${1:?}; CAP=${2:-450}
if [[ "$gpu" == *H200* ]]; then bash benchmarks/results/h200/2026-12-07/call1.sh "$OUT" $(( CAP - 30 )); fi
P=$OUT/p; mkdir -p "$P"; t0=$(date +%s)
B=.prebuilt/probe/nvfp4_direct_shape  # carried; built here if absent or not starting
if ! PROBE_VARIANTS=none PROBE_HOT_MB=1 timeout 60 $B 256x256 > "$P/probe_start.log" 2>&1; then
  B=/tmp/nvfp4_direct_shape
  (cd benchmarks/micro && timeout 120 nvcc -O3 -arch=sm_90 -I../../csrc -o $B nvfp4_direct_shape.cu) > "$P/probe_build.log" 2>&1
  echo "probe built rc=$? $(( $(date +%s) - t0 )) s"
fi
V=U=1xr,U=2xr/3,L1q/3,L2q/3,L1qS/3,L2qS/3,L1qWS/3,L2qWS/3,L2qWS/2,C8U1/3,C8U2/3,C8U2/2,C4U1/3,C4U2/3,C4U2/2
PROBE_VARIANTS=$V,U=1nox PROBE_HOT_MB=24 timeout 30 $B 28672x8192 > "$P/probe_hot24.log" 2>&1
echo "probe hot rc=$? $(( $(date +%s) - t0 )) s"
PROBE_VARIANTS=$V timeout 40 $B 28672x8192 4096x4096 > "$P/probe_cold.log" 2>&1
echo "probe cold rc=$? $(( $(date +%s) - t0 )) s"
for f in hot24 cold; do
  echo "== $f"; grep -E "^==|^M=(1|4|8) " "$P/probe_$f.log" | sed -E 's/  +/ /g; s/ err [^ ]*//; s/ grid [0-9]+//; s/regs //; s| blocks/SM||' | cut -c1-70
done
tar -C "$OUT" -czf "$OUT/p.tgz" p && rm -rf "$P"
