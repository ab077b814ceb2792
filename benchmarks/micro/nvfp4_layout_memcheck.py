"""nvfp4_gemv with layout 1 (csrc/nvfp4/nvfp4_layout.h) on every mma kernel form, and
nvfp4_relayout on an unaligned view, for compute-sanitizer memcheck: x resident and
double-buffered, K split across blocks, per-k-warp staging, one and two n-tiles (M up to 16),
ragged N and K tails; on sm_90 the wgmma GEMV and the decoding wgmma GEMM too. Each result is also compared with layout 0 (same bits).

compute-sanitizer --tool memcheck python benchmarks/micro/nvfp4_layout_memcheck.py
"""
import os

import torch
import torchquant  # noqa: F401
from torchquant import ops

torch.manual_seed(0)
FORMS = (
    {},
    {"TORCHQUANT_NVFP4_XRES": "1", "TORCHQUANT_NVFP4_SPLITK": "3"},
    {"TORCHQUANT_NVFP4_XRES": "-1", "TORCHQUANT_NVFP4_SPLITK": "3"},
    {"TORCHQUANT_NVFP4_XRES": "-1", "TORCHQUANT_NVFP4_SPLITK": "1", "TORCHQUANT_NVFP4_GROUP_SYNC": "1",
     "TORCHQUANT_NVFP4_KS": "2"},
    {"TORCHQUANT_NVFP4_KS": "8", "TORCHQUANT_NVFP4_SPLITK": "1"},
)
checked = 0
for form in FORMS:
    os.environ.update(form)
    try:
        for N, K in ((17, 1072), (257, 4160), (33, 8192 + 64)):
            w = torch.randn(N, K, device="cuda") * 0.05
            wp, ws, gs = ops.quantize_nvfp4(w)
            w1 = ops.nvfp4_relayout(wp, 1)
            for M in (1, 2, 4, 5, 9, 16):
                x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
                y1 = ops.nvfp4_gemv(x, w1, ws, gs, None, "mma", 1)
                y0 = ops.nvfp4_gemv(x, wp, ws, gs, None, "mma", 0)
                assert torch.equal(y0, y1), (form, N, K, M)
                checked += 1
    finally:
        for k in form:
            os.environ.pop(k, None)
if torchquant._C_sm90a is not None and torch.cuda.get_device_capability() == (9, 0):
    for N, K in ((17, 768), (257, 4096)):  # the Hopper wgmma GEMV (path "wgmma", K % 256 == 0)
        w = torch.randn(N, K, device="cuda") * 0.05
        wp, ws, gs = ops.quantize_nvfp4(w)
        w1 = ops.nvfp4_relayout(wp, 1)
        for M in (1, 5, 16, 40):
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            assert torch.equal(ops.nvfp4_gemv(x, w1, ws, gs, None, "wgmma", 1),
                               ops.nvfp4_gemv(x, wp, ws, gs, None, "wgmma", 0)), (N, K, M)
            checked += 1
    for M, N, K in ((33, 197, 1536), (300, 520, 512)):  # the decoding wgmma GEMM (prefill)
        w = torch.randn(N, K, device="cuda") * 0.05
        wp, ws, gs = ops.quantize_nvfp4(w)
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        assert torch.equal(ops._nvfp4_gemm_sm90a(x, ops.nvfp4_relayout(wp, 1), ws, gs, None, 1),
                           ops._nvfp4_gemm_sm90a(x, wp, ws, gs, None, 0)), (M, N, K)
        checked += 1
buf = torch.zeros(257 * 2080 + 4, dtype=torch.uint8, device="cuda")
view = buf[4:].view(257, 2080)
back = ops.nvfp4_relayout(ops.nvfp4_relayout(view, 1), 1, True)
assert torch.equal(back, view)
torch.cuda.synchronize()
print(f"nvfp4 layout 1: {checked} launches equal to layout 0; relayout of an unaligned view round-trips")
