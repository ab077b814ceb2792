"""Small launches of nvfp4_gemv's path "wgmma" (fp4_gemv_sm90a_kernel) on every tile, forced
through TORCHQUANT_NVFP4_WGMMA_TILE: ragged N (a partial feature tile, a partial 16-feature warp
slice), M = 1 (15 unstaged x rows), inside one token tile and across several (the last one
partial), fp16 and bf16, bias on and off, split-K automatic and forced to 3 (CTAs then run
several units), for compute-sanitizer memcheck (out-of-bounds x loads of the producer, TMA
boxes past N, the split workspace).

compute-sanitizer --tool memcheck python benchmarks/micro/nvfp4_wgmma_memcheck.py
"""
import os

import torch
import torchquant  # noqa: F401
ops = torch.ops.torchquant

torch.manual_seed(0)
for tile in ("16x2s3", "16x2s4", "16x1"):
    os.environ["TORCHQUANT_NVFP4_WGMMA_TILE"] = tile
    for splits in ("", "3"):
        os.environ["TORCHQUANT_DQ_WGMMA_SPLITS"] = splits
        for N, K in ((197, 512), (4104, 1280), (77, 2048)):
            wp, ws, gs = ops.quantize_nvfp4(torch.randn(N, K, device="cuda"))
            for M in (1, 7, 16, 33):
                for dt in (torch.float16, torch.bfloat16):
                    x = torch.randn(M, K, device="cuda", dtype=dt)
                    b = torch.randn(N, device="cuda", dtype=dt) if M % 2 else None
                    ops.nvfp4_gemv(x, wp, ws, gs, b, "wgmma")
torch.cuda.synchronize()
print("nvfp4 wgmma memcheck launches done")
