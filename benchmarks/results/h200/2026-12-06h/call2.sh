#!/usr/bin/env bash
# 2026-12-06h, H200 only (an H100 exits at once): call1.sh's first two steps in their short form,
# for the session's last ~280 s of device time: the fp8 direct rule's A/B (auto against
# TORCHQUANT_FP8_DIRECT=-1) on 28672x8192 and 128256x4096 at M = 1 / 8, then bench_e2e at M = 1 / 8.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
[[ "$gpu" == *H200* ]] || { echo "not an H200: nothing to do"; exit 0; }
. benchmarks/call_setup.sh "$1"
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_DIRECT --values auto,-1,auto,-1 \
  --path auto --shapes 28672x8192,128256x4096 --ms 1,8 --out "$R/rule.csv" > "$R/rule.log" 2>&1
echo "rule rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|fp8" "$R/rule.log" | cut -c1-150
timeout 90 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (nvfp4|fp8_block|int8)( static)?  " | cut -c1-100
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
