#!/usr/bin/env bash
# 2026-12-07f call 3, either card. Call 2 (an H100, results/h100/2026-12-07f/call2) found the lean
# form (builds 16 / 17; the probe's L<U>) no faster at M = 1..4 with ~27 % fewer instructions,
# and split the no-x bound's gap with the weight in L2 (28672x8192 M = 1, us): nox 24.2, x loads
# alone (xrskel) 27.9, decode and scale fold alone (dnox) 32.3, both (U=1xr) 35.0. So each warp's
# own decode, not the issue count, is the cost: does overlapping it with the warp's next loads
# (LP: software-pipelined, two register sets) or splitting the mma chain (A<n> accumulators) help?
# On an H200: call1.sh (every check owed there) in CAP - 60 s, then the probe hot and cold; on
# any other card: the probe hot (24 MB in L2) and cold. 28672x8192 and 4096x4096 cold.
# Run from the repository root, carry=[".prebuilt"] (the probe binary in .prebuilt/probe, built
# here with nvcc -O3 -arch=sm_90; rebuilt on the device if it does not start): bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
OUT=${1:?}; CAP=${2:-450}
if [[ "$gpu" == *H200* ]]; then bash benchmarks/results/h200/2026-12-07/call1.sh "$OUT" $(( CAP - 60 )); fi
P=$OUT/p; mkdir -p "$P"; t0=$(date +%s)
B=$(bash benchmarks/micro/probe_bin.sh "$P")
V=${PROBE_V:-U=1xr,U=2xr/3,L1/3,LP1/3,LP1/2,LP2/2,L1A2/3,L1A4/3,LP1A2/3,LP1A4/2}  # (call4.sh: its own)
PROBE_VARIANTS=$V,U=1nox PROBE_HOT_MB=24 timeout 60 $B 28672x8192 > "$P/probe_hot24.log" 2>&1
echo "probe hot rc=$? $(( $(date +%s) - t0 )) s"
PROBE_VARIANTS=$V timeout 70 $B 28672x8192 4096x4096 > "$P/probe_cold.log" 2>&1
echo "probe cold rc=$? $(( $(date +%s) - t0 )) s"
for f in hot24 cold; do
  echo "== $f"; grep -E "^==|^M=(1|4|8) " "$P/probe_$f.log" | sed -E 's/  +/ /g; s/ err [^ ]*//; s/ grid [0-9]+//; s/regs //; s| blocks/SM||' | cut -c1-70
done
tar -C "$OUT" -czf "$OUT/p.tgz" p && rm -rf "$P"
echo "elapsed $(( $(date +%s) - t0 )) s"
