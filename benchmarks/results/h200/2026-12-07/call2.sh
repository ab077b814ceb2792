#!/usr/bin/env bash
# 2026-12-07f call 2, either card. docs/nvfp4_gemv.md 39: the direct GEMV's loop spends ~30 % of
# its instructions on per-piece address arithmetic, predicates and zero fills. Builds 16 / 17 of
# the extension (39cf895: builds 7 / 8 with unpredicated full rounds and pointers advanced by
# constants, the same bits) and the probe's lean forms (L<U>/<blocks per SM>) time that, against
# builds 7 / 8 and their probe forms (U=2xr/2 .. U=2xr/3) in the same process.
#   1. the bits test of every direct build (16 / 17 against the default) and the extension A/B:
#      path direct, layout 3, TORCHQUANT_NVFP4_DIRECT 7 / 16 / 8 / 17, two rounds;
#   2. on an H200: call1.sh (every check owed there) in what is left of CAP;
#      on any other card (H100: the H200's SMs and clocks, so the rates from L2 hold for both):
#      the probe on 28672x8192 with 24 MB in L2 (the lean forms and the split of the no-x bound's
#      gap: nox, xrskel, dnox, xrnos, wrong by design) and cold.
# (Ran once, on an H100: results/h100/2026-12-07f/call2. Builds 16 / 17 were removed again in
# session 12-07f's last commits (no faster at M = 1..4; their reworked form never reached a GPU),
# so step 1 no longer applies at later commits.)
# Run from the repository root, carry=[".prebuilt"] (the extension build and the probe binary,
# .prebuilt/probe, built here with nvcc -O3 -arch=sm_90; rebuilt on the device if it does not
# start): bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
CAP=${2:-450}
timeout 90 $PY -m pytest -q -rs -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py -k "load_depth_builds_same_bits" \
  > "$R/bits.log" 2>&1
echo "bits rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/bits.log"; grep -E "^FAILED" "$R/bits.log" | head -8
timeout 150 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct \
  --var TORCHQUANT_NVFP4_DIRECT --values 7,16,8,17,7,16,8,17 \
  --shapes 28672x8192,28672x4096,14336x4096,4096x4096,4096x14336 --ms 1,4,8 --out "$R/lean.csv" > "$R/lean.log" 2>&1
echo "lean A/B rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^nvfp4|ceiling" "$R/lean.log" | cut -c1-110
if [[ "$gpu" == *H200* ]]; then
  tar -C "$OUT" -czf "$OUT/lean.tgz" r && rm -rf "$R"
  left=$(( CAP - ($(date +%s) - t0) ))
  [ $left -gt 60 ] && bash benchmarks/results/h200/2026-12-07/call1.sh "$OUT" $left
  exit 0
fi
LEAN=U=1xr,U=2xr,U=2xr/3,L1/3,L2/3,L2/2,L3/2,L4/2
SPLIT=U=1nox,U=1xrskel,U=1dnox,U=1xrnos,U=2nox,U=2xrskel/3,U=2dnox/3,U=2xrnos/3
P=$(bash benchmarks/micro/probe_bin.sh "$R")
PROBE_VARIANTS=$LEAN,$SPLIT PROBE_HOT_MB=24 timeout 120 $P 28672x8192 > "$R/probe_hot24.log" 2>&1
echo "probe hot rc=$? $(( $(date +%s) - t0 )) s"
PROBE_VARIANTS=$LEAN,U=1nox timeout 100 $P 28672x8192 4096x4096 > "$R/probe_cold.log" 2>&1
echo "probe cold rc=$? $(( $(date +%s) - t0 )) s"
for f in hot24 cold; do
  echo "== $f"; grep -E "^==|^M=(1|8) " "$R/probe_$f.log" | sed -E 's/  +/ /g; s/ err [^ ]*//; s/ grid [0-9]+//' | cut -c1-80
done
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
