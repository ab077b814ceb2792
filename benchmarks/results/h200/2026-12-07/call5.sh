#!/usr/bin/env bash
# 2026-12-07f call 5, either card. On an H200: call1.sh (every check owed there) in CAP - 30 s,
# then the probe. The probe (~10 s; the only step on any other card): call 4's tiled forms (an
# H100 found them 13 % faster than build 8's form with the weight in L2 at M = 1 and 4-16 % cold;
# docs/nvfp4_gemv.md 39) and, not yet run anywhere, C<P8>: each warp's pieces contiguous and its
# scales loaded once and shuffled (the tiled scales' gain without a storage change?), on
# 28672x8192 and 4096x4096, hot (24 MB in L2) and cold (benchmarks/micro/probe_hot_cold.sh).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT [CAP]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
OUT=${1:?}; CAP=${2:-450}
if [[ "$gpu" == *H200* ]]; then bash benchmarks/results/h200/2026-12-07/call1.sh "$OUT" $(( CAP - 30 )); fi
V=U=1xr,U=2xr/3,L1q/3,L2q/3,L1qS/3,L2qS/3,L1qWS/3,L2qWS/3,L2qWS/2,C8U1/3,C8U2/3,C8U2/2,C4U1/3,C4U2/3,C4U2/2
PROBE_VARIANTS=$V,U=1nox PROBE_S=40 bash benchmarks/micro/probe_hot_cold.sh "$OUT/p" 28672x8192 4096x4096
tar -C "$OUT" -czf "$OUT/p.tgz" p && rm -rf "$OUT/p"
