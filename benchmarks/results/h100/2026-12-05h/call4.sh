#!/usr/bin/env bash
# 2026-12-05h call 4. On an H200: the timings owed since 2026-12-05g
# (results/h200/2026-12-05g/call3.sh) and nothing else. On any other card: two builds of the
# nvfp4 mma GEMV, each against main in one run (ab_builds.sh; overlays ab_lpf1 / ab_lpf2 with
# their prebuilt modules), whose ring also asks L2 for each lane's row of the chunk 1 / 2 ahead of
# the one it copies (prefetch.global.L2, one line of weight and one of scales per lane; call 2 issued the same with cp.async.bulk.prefetch.L2 and lost 20-70 %): the bytes in
# flight that call 1's decomposition points at (the 2-stage ring, no decode: 89 % of the ceiling).
# Run from the repository root, carry=[".prebuilt","ab_lpf1","ab_lpf2"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
case "$gpu" in *H200*) exec bash benchmarks/results/h200/2026-12-05g/call3.sh "$1";; esac
. benchmarks/call_setup.sh "$1"
for v in lpf1 lpf2; do
  el=$(( $(date +%s) - t0 )); left=$(( 580 - el )); [ $left -lt 60 ] && break
  AB_OVERLAY=ab_$v AB_PREBUILT_B=ab_$v AB_SOURCES=csrc/nvfp4/nvfp4_gemv.cu \
  AB_CMDS="benchmarks/micro/env_ab.py --op nvfp4 --layout 1 --path auto --shapes 28672x8192,128256x4096,14336x4096,4096x4096 --var TORCHQUANT_NVFP4_KS --values auto --ms 1,4,16 --out $R/${v}_{v}.csv" \
    timeout $left bash benchmarks/micro/ab_builds.sh "$R/ab_$v" > "$R/ab_$v.log" 2>&1
  echo "ab $v rc=$? $(( $(date +%s) - t0 )) s"; grep -E "build|nvfp4" "$R/ab_$v.log" | cut -c1-120
done
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
