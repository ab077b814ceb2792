"""nvfp4_gemv path 'direct' (weight layout 3, docs/nvfp4_gemv.md 27-28) for compute-sanitizer:
ragged N (rows past N never loaded or stored), one and several token tiles, K of 1 to 64 pieces,
bias, and misaligned views of x, w_packed and w_scale (copied by the op), with every load-depth
build of the kernel (TORCHQUANT_NVFP4_DIRECT=1..15, nvfp4_gemv.cu direct_kernel). Each result is compared
with the CPU op on the same weight (within the fp32 accumulation bound of the tests; here just
finite and close), and with the result of the aligned operands (same bits).

PYTHONPATH=. compute-sanitizer --tool memcheck python benchmarks/micro/nvfp4_direct_memcheck.py [BUILD ...]
(the builds given, default all)
"""
import os
import sys

import torch
import torchquant  # noqa: F401
from torchquant import ops

torch.manual_seed(0)
checked = 0
for build in sys.argv[1:] or [str(b) for b in range(1, 16)]:
    os.environ["TORCHQUANT_NVFP4_DIRECT"] = build
    for N, K in ((1, 128), (17, 1152), (257, 4096), (33, 8192), (100, 1024)):
        w = torch.randn(N, K, device="cuda") * 0.05
        wp, ws, gs = ops.quantize_nvfp4(w)
        w3 = ops.nvfp4_relayout(wp, 3)
        bias = torch.randn(N, device="cuda", dtype=torch.bfloat16)
        for M in (1, 3, 8, 9, 17):
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            for b in (None, bias):
                y = ops.nvfp4_gemv(x, w3, ws, gs, b, "direct", 3)
                y0 = ops.nvfp4_gemv(x.cpu(), wp.cpu(), ws.cpu(), gs.cpu(), None if b is None else b.cpu())
                assert torch.isfinite(y).all() and torch.allclose(y.float().cpu(), y0.float(), rtol=2e-2, atol=2e-2)
                # misaligned views: x 8 bytes, w 4 bytes, scales 1 byte past an aligned base
                xs = torch.empty(x.numel() * 2 + 64, dtype=torch.uint8, device="cuda")[8:8 + x.numel() * 2]
                xs = xs.view(torch.bfloat16).view(M, K)
                xs.copy_(x)
                wb = torch.empty(w3.numel() + 64, dtype=torch.uint8, device="cuda")[4:4 + w3.numel()].view(w3.shape)
                wb.copy_(w3)
                sb = torch.empty(ws.numel() + 64, dtype=torch.uint8, device="cuda")[1:1 + ws.numel()]
                sb = sb.view(torch.float8_e4m3fn).view(ws.shape)
                sb.copy_(ws)
                assert torch.equal(ops.nvfp4_gemv(xs, wb, sb, gs, b, "direct", 3), y)
                checked += 1
torch.cuda.synchronize()
print(f"nvfp4 direct memcheck: {checked} cases ok")
