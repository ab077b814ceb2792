#!/usr/bin/env bash
# 2026-12-07f call 2, either card. docs/nvfp4_gemv.md 39: the direct GEMV's loop spends ~30 % of
# its instructions on per-piece address arithmetic, predicates and zero fills; the probe's lean
# form (L<U>/<blocks per SM>: unpredicated full rounds, pointers advanced by constants, checked
# against the host reference) against U=1xr / U=2xr/3 (the extension's builds 7 / 8), in one
# process, and the split of the no-x bound's gap (nox, xrskel, dnox, xrnos: wrong by design).
# On an H200: call1.sh first (every check owed there, CAP - 75 s), then the lean forms cold on
# 28672x8192 and 4096x4096. On any other card (H100: the H200's SMs and clocks, so the hot rates
# hold for both): 28672x8192 hot (24 MB in L2) and cold, 4096x4096 cold.
# Run from the repository root, carry=[".prebuilt"] (the probe binary in .prebuilt/probe, built
# here with nvcc -O3 -arch=sm_90; rebuilt on the device if it does not start there):
#   bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
OUT=${1:?}; CAP=${2:-450}
LEAN=U=1xr,U=2xr/3,L1/3,L2/3,L2/2,L3/2,L4/2
SPLIT=U=1nox,U=1xrskel,U=1dnox,U=1xrnos,U=2nox,U=2xrskel/3,U=2dnox/3,U=2xrnos/3
if [[ "$gpu" == *H200* ]]; then
  bash benchmarks/results/h200/2026-12-07/call1.sh "$OUT" $(( CAP - 75 ))
  P=$OUT/p; mkdir -p "$P"; t1=$(date +%s)
  PROBE_VARIANTS=$LEAN timeout 70 .prebuilt/probe/nvfp4_direct_shape 28672x8192 4096x4096 > "$P/probe_cold.log" 2>&1
  echo "probe cold rc=$? $(( $(date +%s) - t1 )) s"
  grep -E "^==|^M=(1|8) " "$P/probe_cold.log" | sed -E 's/  +/ /g; s/ err [^ ]*//; s/ grid [0-9]+//' | cut -c1-80
  tar -C "$OUT" -czf "$OUT/p.tgz" p && rm -rf "$P"
  exit 0
fi
R=$OUT/r; mkdir -p "$R"; t0=$(date +%s)
P=.prebuilt/probe/nvfp4_direct_shape
if ! PROBE_VARIANTS=none PROBE_HOT_MB=1 timeout 60 $P 256x256 > "$R/probe_start.log" 2>&1; then
  P=/tmp/nvfp4_direct_shape
  (cd benchmarks/micro && timeout 120 nvcc -O3 -arch=sm_90 -I../../csrc -o $P nvfp4_direct_shape.cu) > "$R/probe_build.log" 2>&1
  echo "probe rebuilt rc=$? $(( $(date +%s) - t0 )) s"
fi
PROBE_VARIANTS=$LEAN,$SPLIT PROBE_HOT_MB=24 timeout 120 $P 28672x8192 > "$R/probe_hot24.log" 2>&1
echo "probe hot rc=$? $(( $(date +%s) - t0 )) s"
PROBE_VARIANTS=$LEAN,U=1nox timeout 100 $P 28672x8192 4096x4096 > "$R/probe_cold.log" 2>&1
echo "probe cold rc=$? $(( $(date +%s) - t0 )) s"
for f in hot24 cold; do
  echo "== $f"; grep -E "^==|^M=(1|8) " "$R/probe_$f.log" | sed -E 's/  +/ /g; s/ err [^ ]*//; s/ grid [0-9]+//' | cut -c1-80
done
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
