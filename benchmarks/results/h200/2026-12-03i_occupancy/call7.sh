#!/usr/bin/env bash
# 2026-12-03i call 7: how many clusters of 1 / 2 / 4 / 8 one-CTA-per-SM blocks the H200 holds at
# once (cudaOccupancyMaxActiveClusters) and how many of 128 such CTAs start together, at 100-227
# KB of shared memory: the placement question of the 2:4 wgmma K split (docs/sparse24_wgmma.md).
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
nvcc -arch=sm_90a -o /tmp/cluster_occupancy benchmarks/micro/cluster_occupancy.cu > "$R/build.log" 2>&1; echo "nvcc rc=$?"
timeout 60 /tmp/cluster_occupancy > "$R/clusters.txt" 2>&1; echo "rc=$?"; cat "$R/clusters.txt"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
