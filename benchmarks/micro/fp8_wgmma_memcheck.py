"""Small launches of fp8_block_gemv's path "wgmma" (dq_gemv_sm90a_kernel) on both tiles and both
bf16 conversions, forced through TORCHQUANT_FP8_WGMMA_TILE / TORCHQUANT_FP8_WGMMA_BF16: ragged N
(a partial feature tile and a partial 16-feature warp slice), M inside one token tile and across
several, block sizes 64 / 192 / 256 (blocks crossing stages, a ragged last block), split-K
automatic and forced to 3 (so CTAs also run several units), for compute-sanitizer memcheck.

compute-sanitizer --tool memcheck python benchmarks/micro/fp8_wgmma_memcheck.py [tiled]

tiled: the same on the tiled weight (fp8_block_tile; N % 16 == 0: 208, 4112, 80), the wgmma GEMV's
tiled form (no re-seat) and the dequantizing GEMM's (_fp8_block_gemm_sm90a(..., tiled=True)) at
M = 65 and 300 on each of its tiles.
"""
import os
import sys

import torch
import torchquant  # noqa: F401
ops = torch.ops.torchquant

torch.manual_seed(0)
TILED = "tiled" in sys.argv[1:]
SHAPES = ((208, 384, 64), (4112, 1152, 192), (80, 1408, 256)) if TILED else ((197, 384, 64), (4104, 1152, 192),
                                                                          (77, 1408, 256))
for tile, cvt in (("16x1", ""), ("16x2", "")) + ((("16x2", "reseat"),) if not TILED else ()):
    os.environ["TORCHQUANT_FP8_WGMMA_TILE"] = tile
    os.environ["TORCHQUANT_FP8_WGMMA_BF16"] = cvt
    for splits in ("", "3"):
        os.environ["TORCHQUANT_DQ_WGMMA_SPLITS"] = splits
        for N, K, bs in SHAPES:
            w_q, w_s = ops.quantize_fp8_block(torch.randn(N, K, device="cuda"), bs)
            if TILED:
                w_q, w_s = ops.fp8_block_tile(w_q, w_s)
            for M in (1, 9, 33):
                for dt in ((torch.bfloat16,) if cvt else (torch.float16, torch.bfloat16)):
                    x = torch.randn(M, K, device="cuda", dtype=dt)
                    ops.fp8_block_gemv(x, w_q, w_s, bs, torch.randn(N, device="cuda", dtype=dt), "wgmma", False, TILED)
if TILED:
    os.environ["TORCHQUANT_FP8_WGMMA_TILE"] = ""
    for dq_tile in ("256c2", "256c1", "128c1", "64c1"):
        os.environ["TORCHQUANT_DQ_WGMMA_TILE"] = dq_tile
        for N, K, bs in SHAPES:
            w_q, w_s = ops.fp8_block_tile(*ops.quantize_fp8_block(torch.randn(N, K, device="cuda"), bs))
            for M in (65, 300):
                x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
                ops._fp8_block_gemm_sm90a(x, w_q, w_s, bs, torch.randn(N, device="cuda", dtype=torch.bfloat16), True)
torch.cuda.synchronize()
print("fp8 wgmma memcheck launches done")
