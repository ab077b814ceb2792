#!/usr/bin/env bash
# 2026-12-06d call 5: call 4's raw chain gained 4 us at M = 8 from build 12 on gate_up (60.6-61.0 ->
# 56.8-56.9) while bench_e2e's fused layer did not (call 3: 61.2-61.5). The same chain through
# QuantLinear modules in the same process, then bench_e2e once.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
for r in 1 2; do
  PYTHONPATH=. timeout 120 $PY benchmarks/micro/nvfp4_chain_layer_env.py --ms 1,8 \
    --variant 2:TORCHQUANT_NVFP4_DIRECT_MAX_M=-1 --out "$R/chain_$r.csv" > "$R/chain_$r.log" 2>&1
  echo "chain $r rc=$? $(( $(date +%s) - t0 )) s"; tail -4 "$R/chain_$r.log"
done
timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_1" > "$R/e2e_1.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_1.log" | grep -E "bf16 F.linear|QuantLinear nvfp4 " | cut -c1-100
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
