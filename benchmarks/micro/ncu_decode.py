"""Launch each decode kernel once at 28672x8192 (M = 1 and 16) for Nsight Compute.

ncu --clock-control none --kernel-name regex:gemv python benchmarks/micro/ncu_decode.py
"""
import torch
import torchquant  # noqa: F401
from torchquant import ops

torch.manual_seed(0)
N, K = 28672, 8192
dev = "cuda"
w = torch.randn(N, K, device=dev) * 0.02
wq8, ws8 = ops.quantize_fp8_block(w, 128)
wp4, s4, g4 = ops.quantize_nvfp4(w)
iq, isc, _ = ops.quantize_int8(w, True, True)
for M in (1, 16):
    x = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
    for path in ("fma", "mma"):
        ops.fp8_block_gemv(x, wq8, ws8, 128, None, path)
        ops.nvfp4_gemv(x, wp4, s4, g4, None, path)
    aq, asc, _ = ops.quantize_int8(x.float(), True, True)
    ops.int8_matmul(aq, asc, None, iq, isc, None, None, torch.bfloat16, "gemv")
torch.cuda.synchronize()
print("ok")
