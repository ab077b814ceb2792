#!/usr/bin/env bash
# 2026-12-07f call 2, either card. On an H200: call1.sh (every check owed there), unchanged.
# On any other card (the H100s the device lends most calls, whose SMs and clocks are the H200's):
# docs/nvfp4_gemv.md 39's split of the no-x bound's gap, with the weight in L2 (PROBE_HOT_MB=24)
# and cold, on 28672x8192: the correct U=1xr / U=2xr/3 against, in the same process, nox (no
# decode, no x loads), xrskel (no decode, x loaded with the weight), dnox (decode and scale fold,
# no x loads) and xrnos (decode without the scale fold, x with the weight); ~70 s.
# Run from the repository root, carry=[".prebuilt"] (the probe binary in .prebuilt/probe, built
# here with nvcc -O3 -arch=sm_90; rebuilt on the device if it does not start there):
#   bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
if [[ "$gpu" == *H200* ]]; then exec bash benchmarks/results/h200/2026-12-07/call1.sh "$@"; fi
OUT=${1:?}; R=$OUT/r; mkdir -p "$R"; t0=$(date +%s)
P=.prebuilt/probe/nvfp4_direct_shape
if ! PROBE_VARIANTS=none PROBE_HOT_MB=1 timeout 60 $P 256x256 > "$R/probe_start.log" 2>&1; then
  P=/tmp/nvfp4_direct_shape
  (cd benchmarks/micro && timeout 120 nvcc -O3 -arch=sm_90 -I../../csrc -o $P nvfp4_direct_shape.cu) > "$R/probe_build.log" 2>&1
  echo "probe rebuilt rc=$? $(( $(date +%s) - t0 )) s"
fi
export PROBE_VARIANTS=U=1xr,U=1nox,U=1xrskel,U=1dnox,U=1xrnos,U=2xr/3,U=2nox,U=2xrskel/3,U=2dnox/3,U=2xrnos/3
for mb in 24 0; do
  PROBE_HOT_MB=$mb timeout 120 $P 28672x8192 > "$R/probe_hot$mb.log" 2>&1
  echo "probe hot=$mb MB rc=$? $(( $(date +%s) - t0 )) s"
done
for mb in 24 0; do
  echo "== hot $mb MB (0: cold)"; grep -E "^M=(1|8) " "$R/probe_hot$mb.log" | sed -E 's/  +/ /g; s/ err [^ ]*//; s/ grid [0-9]+//' | cut -c1-80
done
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
