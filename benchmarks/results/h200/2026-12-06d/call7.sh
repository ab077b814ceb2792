#!/usr/bin/env bash
# 2026-12-06d call 7: bench_e2e's fused layer at M = 8 stays at 61.4 us with gate_up on build 12
# (call 6: the kernels are the ones nvfp4_chain_layer_env.py times at 57.6-57.7). bench_e2e with
# TORCHQUANT_PDL=0 and unset, and with gate_up's build forced back (TORCHQUANT_NVFP4_DIRECT=8 on
# every direct call), then the chain tool, in one call.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
i=0
for kv in "TORCHQUANT_PDL=0" "TORCHQUANT_PDL=" "TORCHQUANT_NVFP4_DIRECT=8"; do
  i=$((i + 1))
  env "$kv" timeout 100 $PY benchmarks/bench_e2e.py --shapes fused --ms 1,8 --out "$R/e2e_$i" > "$R/e2e_$i.log" 2>&1
  echo "e2e $kv rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_$i.log" | grep -E "QuantLinear nvfp4  " | cut -c1-80
done
PYTHONPATH=. timeout 120 $PY benchmarks/micro/nvfp4_chain_layer_env.py --ms 1,8 --variant '*:TORCHQUANT_PDL=0' \
  --out "$R/chain.csv" > "$R/chain.log" 2>&1
echo "chain rc=$? $(( $(date +%s) - t0 )) s"; tail -2 "$R/chain.log"
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
