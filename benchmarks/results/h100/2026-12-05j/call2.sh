#!/usr/bin/env bash
# Run in 2026-12-05j as call 2 on an H100 (csrc 86de0cd), right after call 1 on the same machine.
# 2026-12-05i call 3 (not run in 2026-12-05i; after call 2 passes): the fused Llama-3-8B layer
# through QuantLinear with layout 1 (the default) and layout 3 ("QuantLinear nvfp4 layout3":
# the direct GEMV on qkv / o at M = 1, 8 by direct_rule), two rounds; bench_nvfp4's layout 1 / 3
# rows on the issue shapes beside bf16 cuBLAS; then the load-depth probe
# (.prebuilt/probe/nvfp4_direct_shape, built on the development machine with nvcc 13.0 -O3
# -arch=sm_90 from benchmarks/micro/nvfp4_direct_shape.cu) while time lasts.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
for r in 1 2; do
  timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_$r" > "$R/e2e_$r.log" 2>&1
  echo "e2e $r rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_$r.log" | grep -E "bf16 F.linear|QuantLinear nvfp4" | cut -c1-100
done
timeout 110 $PY benchmarks/bench_nvfp4.py --full --shapes 28672x8192,128256x4096,4096x4096,6144x4096 --ms 1,8,16 \
  --forced-max-m 0 --out "$R/nvfp4_rows" > "$R/nvfp4.log" 2>&1
echo "nvfp4 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "tq auto|static +[0-9]|bf16 F.linear" "$R/nvfp4.log" | cut -c1-110 | head -60
el=$(( $(date +%s) - t0 )); left=$(( 570 - el ))
PROBE_VARIANTS=U=2,U=3/3,U=3,U=4,U=6,U=8,U=2pipe,U=2pipe/3,U=3pipe,U=4pipe,U=2p,U=4p \
  timeout $left .prebuilt/probe/nvfp4_direct_shape 28672x8192 128256x4096 14336x4096 4096x4096 > "$R/direct.log" 2>&1
echo "probe rc=$? $(( $(date +%s) - t0 )) s"; grep -E "==|us" "$R/direct.log" | sed -E 's/  +/ /g' | cut -c1-90
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
