#!/usr/bin/env bash
# 2026-12-06d call 6: call 5 timed the fused layer's QuantLinear chain at 57.6-57.7 us (M = 8) in
# nvfp4_chain_layer_env.py but 61.4 in bench_e2e. (1) The kernels each of bench_e2e's fused
# QuantLinear nvfp4 projections launches at M = 1 and 8 (its weights: unscaled randn, bf16);
# (2) bench_e2e's fused layer at M = 8 with the knobs unset and with TORCHQUANT_NVFP4_DIRECT_MAX_M=4
# (the direct GEMV at M <= 4 only: the rule before this session for the larger grids).
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
PYTHONPATH=.:tests timeout 60 $PY - <<'PY' 2>&1 | tee "$R/kernels.log"
import torch, torchquant
from torchquant.nn import QuantLinear
from conftest import kernels_launched
for n, k in ((6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336)):
    lin = torch.nn.Linear(k, n, bias=False, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(n, k, device="cuda", dtype=torch.bfloat16))
    q = QuantLinear.from_float(lin, "nvfp4").eval()
    for M in (1, 8):
        x = torch.randn(M, k, device="cuda", dtype=torch.bfloat16)
        names = kernels_launched(lambda: q(x))
        print(f"{n}x{k} M={M}: layout {q.nvfp4_layout}:", " ; ".join(s[:90] for s in names))
PY
for v in "" 4; do
  TORCHQUANT_NVFP4_DIRECT_MAX_M=$v timeout 100 $PY benchmarks/bench_e2e.py --shapes fused --ms 8 --out "$R/e2e_max$v" > "$R/e2e_max$v.log" 2>&1
  echo "e2e MAX_M=$v rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_max$v.log" | grep -E "bf16 F.linear|QuantLinear nvfp4 " | cut -c1-100
done
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
