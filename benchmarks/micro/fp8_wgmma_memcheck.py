"""Small launches of fp8_block_gemv's path "wgmma" (dq_gemv_sm90a_kernel) on both tiles and both
bf16 conversions, forced through TORCHQUANT_FP8_WGMMA_TILE / TORCHQUANT_FP8_WGMMA_BF16: ragged N
(a partial feature tile and a partial 16-feature warp slice), M inside one token tile and across
several, block sizes 64 / 192 / 256 (blocks crossing stages, a ragged last block), split-K
automatic and forced to 3 (so CTAs also run several units), for compute-sanitizer memcheck.

compute-sanitizer --tool memcheck python benchmarks/micro/fp8_wgmma_memcheck.py
"""
import os

import torch
import torchquant  # noqa: F401
ops = torch.ops.torchquant

torch.manual_seed(0)
for tile, cvt in (("16x1", ""), ("16x2", ""), ("16x2", "reseat")):
    os.environ["TORCHQUANT_FP8_WGMMA_TILE"] = tile
    os.environ["TORCHQUANT_FP8_WGMMA_BF16"] = cvt
    for splits in ("", "3"):
        os.environ["TORCHQUANT_DQ_WGMMA_SPLITS"] = splits
        for N, K, bs in ((197, 384, 64), (4104, 1152, 192), (77, 1408, 256)):
            w_q, w_s = ops.quantize_fp8_block(torch.randn(N, K, device="cuda"), bs)
            for M in (1, 9, 33):
                for dt in ((torch.bfloat16,) if cvt else (torch.float16, torch.bfloat16)):
                    x = torch.randn(M, K, device="cuda", dtype=dt)
                    ops.fp8_block_gemv(x, w_q, w_s, bs, torch.randn(N, device="cuda", dtype=dt), "wgmma")
torch.cuda.synchronize()
print("fp8 wgmma memcheck launches done")
