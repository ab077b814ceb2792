"""fp8_block_gemv path 'direct' (fp8_gemv_direct_kernel, docs/fp8_gemv.md "The direct GEMV") for
compute-sanitizer: every build (TORCHQUANT_FP8_DIRECT_BUILD = 1..5: U 2 / 3 / 4 pieces in flight
with one token tile, U 2 / 1 with two), ragged N (rows past N never loaded or stored), K of one
64-byte piece to many with block sizes 64 / 128 / 192 / 256, M inside one token tile, across the
two-tile builds' 16 rows and past them, bias, static_weight (the PDL early loads), fp16 and bf16,
and misaligned views of x and w_q (the op copies them to aligned storage). Each result is compared
with the CPU op on the same weight (finite and close; the tests hold the derived bound), and the
misaligned and static_weight results with the aligned one (same bits). Then the tiled weight's
forms (the direct builds' and the ring kernel's) against the row-major weight's bits.

PYTHONPATH=. compute-sanitizer --tool memcheck python benchmarks/micro/fp8_direct_memcheck.py [BUILD ...]
(the builds given, default all)
"""
import os
import sys

import torch
import torchquant  # noqa: F401
from torchquant import ops

torch.manual_seed(0)
checked = 0
for build in sys.argv[1:] or [str(b) for b in range(1, 6)]:
    os.environ["TORCHQUANT_FP8_DIRECT_BUILD"] = build
    for N, K, bs in ((1, 64, 64), (17, 1152, 128), (257, 768, 192), (33, 4096, 256), (100, 1024, 64)):
        w = torch.randn(N, K, device="cuda") * 0.05
        wq, wsc = ops.quantize_fp8_block(w, bs)
        wq_c, wsc_c = wq.cpu(), wsc.cpu()
        for dt in (torch.bfloat16, torch.float16):
            bias = torch.randn(N, device="cuda", dtype=dt)
            for M in (1, 3, 8, 9, 16, 17):
                x = torch.randn(M, K, device="cuda", dtype=dt)
                for b in (None, bias):
                    y = ops.fp8_block_gemv(x, wq, wsc, bs, b, "direct")
                    y0 = ops.fp8_block_gemv(x.cpu(), wq_c, wsc_c, bs, None if b is None else b.cpu())
                    assert torch.isfinite(y).all()
                    assert torch.allclose(y.float().cpu(), y0.float(), rtol=2e-2, atol=2e-2)
                    assert torch.equal(ops.fp8_block_gemv(x, wq, wsc, bs, b, "direct", True), y)
                    # misaligned views: x 8 bytes and w_q 4 bytes past an aligned base
                    xs = torch.empty(x.numel() * 2 + 64, dtype=torch.uint8, device="cuda")[8:8 + x.numel() * 2]
                    xs = xs.view(dt).view(M, K)
                    xs.copy_(x)
                    wb = torch.empty(wq.numel() + 64, dtype=torch.uint8, device="cuda")[4:4 + wq.numel()]
                    wb = wb.view(torch.float8_e4m3fn).view(wq.shape)
                    wb.copy_(wq)
                    assert torch.equal(ops.fp8_block_gemv(xs, wb, wsc, bs, b, "direct"), y)
                    checked += 1
# The tiled weight (fp8_block_tile, docs/fp8_gemv.md "The tiled weight"): each build's tiled form
# and the ring kernel's (path mma) against the row-major weight's bits in the same kernel (the ring
# without XR), a half-filled last ring stage (K % 128 == 64) included.
tiled = 0
for N, K, bs in ((16, 64, 64), (48, 1152, 128), (32, 4096 + 64, 256)):
    w = torch.randn(N, K, device="cuda") * 0.05
    wq, wsc = ops.quantize_fp8_block(w, bs)
    tq, ts = ops.fp8_block_tile(wq, wsc)
    for dt in (torch.bfloat16, torch.float16):
        for M in (1, 8, 9, 17):
            x = torch.randn(M, K, device="cuda", dtype=dt)
            for build in sys.argv[1:] or [str(b) for b in range(1, 6)]:
                os.environ["TORCHQUANT_FP8_DIRECT_BUILD"] = build
                y = ops.fp8_block_gemv(x, wq, wsc, bs, None, "direct")
                assert torch.equal(ops.fp8_block_gemv(x, tq, ts, bs, None, "direct", False, True), y)
                assert torch.equal(ops.fp8_block_gemv(x, tq, ts, bs, None, "direct", True, True), y)
                tiled += 1
            os.environ["TORCHQUANT_FP8_XRING"] = "0"
            y = ops.fp8_block_gemv(x, wq, wsc, bs, None, "mma")
            del os.environ["TORCHQUANT_FP8_XRING"]
            assert torch.equal(ops.fp8_block_gemv(x, tq, ts, bs, None, "mma", False, True), y)
            assert torch.equal(ops.fp8_block_gemv(x, tq, ts, bs, None, "mma", True, True), y)
            tiled += 1
torch.cuda.synchronize()
print(f"fp8 direct memcheck: {checked} cases ok; tiled: {tiled} cases ok")
