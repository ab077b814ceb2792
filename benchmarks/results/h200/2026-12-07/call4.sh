#!/usr/bin/env bash
# 2026-12-07f call 4, either card: call3.sh with other probe forms. Call 2 (an H100, results/h100/2026-12-07f/call2) found the lean
# form (builds 16 / 17; the probe's L<U>) no faster at M = 1..4 with ~27 % fewer instructions,
# and split the no-x bound's gap with the weight in L2 (28672x8192 M = 1, us): nox 24.2, x loads
# alone (xrskel) 27.9, decode and scale fold alone (dnox) 32.3, both (U=1xr) 35.0. So each warp's
# own decode, not the issue count, is the cost: does overlapping it with the warp's next loads
# (LP: software-pipelined, two register sets) or splitting the mma chain (A<n> accumulators) help?
# Call 3 (an H100): neither helped (LP 42.7, A2 38.8 against U=1xr 38.4 us hot at M = 1), and the
# lean form's unpredicated x loads cost 6 us hot at M = 4 (46.5 against 40.0): here the lean form
# with U=1xr's predicated x loads, without their zero fill (L<U>q), and with the scales (S) or the
# weight and the scales (WS) stored per 16-row tile and piece, so a scale load touches one
# 128-byte line (8 now) and a weight load 4 whole lines (8 half lines now).
# On an H200: call1.sh (every check owed there) in CAP - 60 s, then the probe hot and cold; on
# any other card: the probe hot (24 MB in L2) and cold. 28672x8192 and 4096x4096 cold.
# Run from the repository root, carry=[".prebuilt"] (the probe binary in .prebuilt/probe, built
# here with nvcc -O3 -arch=sm_90; rebuilt on the device if it does not start): bash <this> $OUT [CAP]
set -uo pipefail
PROBE_V=U=1xr,U=2xr/3,L1/3,L1q/3,L2q/3,L1qS/3,L2qS/3,L1qWS/3,L2qWS/3,L2qWS/2 \
  exec bash benchmarks/results/h200/2026-12-07/call3.sh "$@"
