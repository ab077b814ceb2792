#!/usr/bin/env bash
# 2026-12-06g call 2 (the H100 fallback of an H200 try): the fp8 decode table at the 8x-L2 rotation under
# the direct rule with c04f3cc's M = 9..16 branch.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
timeout 110 $PY benchmarks/bench_fp8.py --full --ms 1,2,4,8,16 --forced-max-m 1 --out "$R/fp8_table" > "$R/fp8_table.log" 2>&1
echo "fp8 table rc=$? $(( $(date +%s) - t0 )) s"
grep -E "(28672x8192|128256x4096|4096x4096|4096x14336) M=(1|8|16) +(tq auto|bf16 F.linear) " "$R/fp8_table.log" | cut -c1-90
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
