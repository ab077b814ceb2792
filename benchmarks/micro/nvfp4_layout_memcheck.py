"""nvfp4_gemv with layouts 1 (bf16 x) and 2 (fp16 x) (csrc/nvfp4/nvfp4_layout.h) on every mma
kernel form, and
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
hopper = torchquant._C_sm90a is not None and torch.cuda.get_device_capability() == (9, 0)
for layout, dt in ((1, torch.bfloat16), (2, torch.float16)):
    for form in FORMS:
        os.environ.update(form)
        try:
            for N, K in ((17, 1072), (257, 4160), (33, 8192 + 64)):
                w = torch.randn(N, K, device="cuda") * 0.05
                wp, ws, gs = ops.quantize_nvfp4(w)
                wl = ops.nvfp4_relayout(wp, layout)
                for M in (1, 2, 4, 5, 9, 16):
                    x = torch.randn(M, K, device="cuda", dtype=dt)
                    y1 = ops.nvfp4_gemv(x, wl, ws, gs, None, "mma", layout)
                    y0 = ops.nvfp4_gemv(x, wp, ws, gs, None, "mma", 0)
                    assert torch.equal(y0, y1), (layout, form, N, K, M)
                    checked += 1
        finally:
            for k in form:
                os.environ.pop(k, None)
    if hopper:
        for N, K in ((17, 768), (257, 4096)):  # the Hopper wgmma GEMV (path "wgmma", K % 256 == 0)
            w = torch.randn(N, K, device="cuda") * 0.05
            wp, ws, gs = ops.quantize_nvfp4(w)
            wl = ops.nvfp4_relayout(wp, layout)
            for M in (1, 5, 16, 40):
                x = torch.randn(M, K, device="cuda", dtype=dt)
                assert torch.equal(ops.nvfp4_gemv(x, wl, ws, gs, None, "wgmma", layout),
                                   ops.nvfp4_gemv(x, wp, ws, gs, None, "wgmma", 0)), (layout, N, K, M)
                checked += 1
        for M, N, K in ((33, 197, 1536), (300, 520, 512)):  # the decoding wgmma GEMM (prefill)
            w = torch.randn(N, K, device="cuda") * 0.05
            wp, ws, gs = ops.quantize_nvfp4(w)
            x = torch.randn(M, K, device="cuda", dtype=dt)
            assert torch.equal(torch.ops.torchquant._nvfp4_gemm_sm90a(x, ops.nvfp4_relayout(wp, layout), ws, gs, None, layout),
                               torch.ops.torchquant._nvfp4_gemm_sm90a(x, wp, ws, gs, None, 0)), (layout, M, N, K)
            checked += 1
buf = torch.zeros(257 * 2080 + 4, dtype=torch.uint8, device="cuda")
view = buf[4:].view(257, 2080)
for layout in (1, 2):
    back = ops.nvfp4_relayout(ops.nvfp4_relayout(view, layout), layout, True)
    assert torch.equal(back, view)
torch.cuda.synchronize()
print(f"nvfp4 layouts 1, 2: {checked} launches equal to layout 0; relayout of an unaligned view round-trips")
