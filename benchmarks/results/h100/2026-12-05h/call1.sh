#!/usr/bin/env bash
# 2026-12-05h call 1 (a384a04). On an H200: the timings owed since 2026-12-05g
# (results/h200/2026-12-05g/call3.sh) and nothing else. On any other card: the GPU tests of the
# wgmma GEMVs and dequantizing GEMMs (gemv_grid's split_rule change), then three diagnostic
# builds of the nvfp4 mma GEMV, each against main in one run (ab_builds.sh; overlays ab_<v>,
# carried with their prebuilt modules): "skel" has no decode and no scale multiply (each weight
# word goes to the mma as it lies: the loads, ring, x staging and mma alone); "noscl" does not
# copy the block scales (the ring's 16 bytes per row and chunk; the decode uses stale shared
# memory); "sclhint" copies them with the .L2::256B prefetch hint. skel and noscl give wrong
# results by design (timing only); sclhint is a candidate change.
# Run from the repository root, carry=[".prebuilt","ab_skel","ab_noscl","ab_sclhint"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
case "$gpu" in *H200*) exec bash benchmarks/results/h200/2026-12-05g/call3.sh "$1";; esac
. benchmarks/call_setup.sh "$1"
timeout 200 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_fp8_wgmma_cuda.py tests/test_nvfp4_wgmma_cuda.py > "$R/tests_dq.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_dq.log"; grep -E "^FAILED" "$R/tests_dq.log" | head -5
for v in noscl sclhint skel; do
  el=$(( $(date +%s) - t0 )); left=$(( 580 - el )); [ $left -lt 60 ] && break
  AB_OVERLAY=ab_$v AB_PREBUILT_B=ab_$v AB_SOURCES=csrc/nvfp4/nvfp4_gemv.cu \
  AB_CMDS="benchmarks/micro/env_ab.py --op nvfp4 --layout 1 --path auto --shapes 28672x8192,128256x4096,4096x4096 --var TORCHQUANT_NVFP4_KS --values auto --ms 1,4 --out $R/${v}_{v}.csv" \
    timeout $left bash benchmarks/micro/ab_builds.sh "$R/ab_$v" > "$R/ab_$v.log" 2>&1
  echo "ab $v rc=$? $(( $(date +%s) - t0 )) s"; grep -E "build|nvfp4" "$R/ab_$v.log" | cut -c1-120
done
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
