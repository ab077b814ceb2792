#!/usr/bin/env bash
# 2026-12-06 call 4 (after 12-05j's call3.sh on the same card, csrc 9da7cf0): the standing H200
# numbers of issues 3, 4 and 5 refreshed on one machine, then the load-depth probe
# (.prebuilt/probe/nvfp4_direct_shape, nvcc 13.0 -O3 -arch=sm_90 from
# benchmarks/micro/nvfp4_direct_shape.cu) on the H200 for the first time: does any stream shape of
# the nvfp4 decode reach the 88 % of the read ceiling issue 5 asks on the large layers?
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
timeout 90 $PY benchmarks/bench_int8.py --shapes 28672x8192 --ms 1,16 --forced-max-m 1 --out "$R/int8" > "$R/int8.log" 2>&1
echo "int8 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "tq |static|bf16 F.linear|_int_mm" "$R/int8.log" | cut -c1-100 | head -12
timeout 110 $PY benchmarks/bench_fp8.py --full --shapes 28672x8192,128256x4096,4096x4096 --ms 1,8,16 \
  --forced-max-m 0 --out "$R/fp8_rows" > "$R/fp8.log" 2>&1
echo "fp8 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "tq auto|static +[0-9]|bf16 F.linear" "$R/fp8.log" | cut -c1-100 | head -40
el=$(( $(date +%s) - t0 )); left=$(( ${CALL_LEFT:-560} - el ))
if (( left >= 30 )); then
  PROBE_VARIANTS=U=2,U=3/3,U=4,U=6,U=8,U=2pipe,U=3pipe,U=4pipe,U=2p,U=4p,U=4xs \
    timeout $left .prebuilt/probe/nvfp4_direct_shape 28672x8192 128256x4096 4096x14336 4096x4096 > "$R/direct.log" 2>&1
  echo "probe rc=$? $(( $(date +%s) - t0 )) s"; grep -E "==|us" "$R/direct.log" | sed -E 's/  +/ /g' | cut -c1-90
fi
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
