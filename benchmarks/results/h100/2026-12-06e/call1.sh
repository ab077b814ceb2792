#!/usr/bin/env bash
# 2026-12-06e call 1 (any card). Is the cold-L2 rotation cold enough? benchmarks/micro/rotation_depth.py
# times nvfp4 / bf16 / torch.sum on 28672x8192 and 14336x4096 and the fused Llama-3-8B layer's four
# projections (nvfp4, bf16) with the rotation's copies x1 / x2 / x4 / x8, then bench_e2e once
# (whose fused-layer rotation is 4 copies against the chain tool's 2: docs/nvfp4_gemv.md 34's gap).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
. benchmarks/call_setup.sh "$1"
PYTHONPATH=. timeout 300 $PY benchmarks/micro/rotation_depth.py --ms 1,8 --mults 1,2,4,8 --out "$R/rotation.csv" 2>&1 | tee "$R/rotation.log"
echo "rotation rc=$? $(( $(date +%s) - t0 )) s"
timeout 120 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_1" > "$R/e2e_1.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_1.log" | grep -E "bf16 F.linear|QuantLinear nvfp4  |fp8_block  " | cut -c1-100
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
