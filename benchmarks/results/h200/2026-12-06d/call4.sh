#!/usr/bin/env bash
# 2026-12-06d call 4: why the fused Llama-3-8B layer at M = 8 did not gain from build 12 on gate_up
# (call 3: 28672x4096 alone 30.3 -> 26.3 us, the layer 60.3-61.3 -> 61.2-61.5). The chain of the four
# projections with knobs on one projection at a time (benchmarks/micro/nvfp4_chain_layer_env.py),
# twice. Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
for r in 1 2; do
  PYTHONPATH=. timeout 120 $PY benchmarks/micro/nvfp4_chain_layer_env.py --ms 1,8 \
    --variant 2:TORCHQUANT_NVFP4_DIRECT_MAX_M=-1 --variant 2:TORCHQUANT_NVFP4_DIRECT=8 \
    --variant 2:TORCHQUANT_NVFP4_DIRECT=10 --variant 2:TORCHQUANT_PDL=0 --variant 3:TORCHQUANT_PDL=0 \
    --variant '*:TORCHQUANT_PDL=0' --out "$R/chain_$r.csv" > "$R/chain_$r.log" 2>&1
  echo "chain $r rc=$? $(( $(date +%s) - t0 )) s"; cat "$R/chain_$r.log" | tail -4
done
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
