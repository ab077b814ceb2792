"""Launch each decode kernel once for Nsight Compute.

28672x8192 at M = 1 and 16 (every kernel), and 4096x4096 at M = 1, 8, 16 (the
small Llama-3-8B projection, where nvfp4's time grows with M).

ncu --clock-control none --kernel-name regex:gemv python benchmarks/micro/ncu_decode.py
"""
import torch
import torchquant  # noqa: F401
from torchquant import ops

torch.manual_seed(0)
dev = "cuda"
for N, K, ms in ((28672, 8192, (1, 16)), (4096, 4096, (1, 8, 16))):
    w = torch.randn(N, K, device=dev) * 0.02
    wq8, ws8 = ops.quantize_fp8_block(w, 128)
    wp4, s4, g4 = ops.quantize_nvfp4(w)
    iq, isc, _ = ops.quantize_int8(w, True, True)
    for M in ms:
        x = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
        paths = ("fma", "mma") if N > 4096 else ("mma",)
        for path in paths:
            ops.fp8_block_gemv(x, wq8, ws8, 128, None, path)
            ops.nvfp4_gemv(x, wp4, s4, g4, None, path)
        if N > 4096:
            aq, asc, _ = ops.quantize_int8(x.float(), True, True)
            ops.int8_matmul(aq, asc, None, iq, isc, None, None, torch.bfloat16, "gemv")
torch.cuda.synchronize()
print("ok")
