"""Small launches of the 2:4 sparse-wgmma GEMM (int8 and bf16) on every tile configuration,
forced through TORCHQUANT_SP24_WGMMA_TILE: ragged N (a partial feature tile), M inside one
token tile (the activation box cut to round_up(M, 8) rows) and across several, K that ends
inside a wide int8 stage (256 logical K), for compute-sanitizer memcheck. The K-split tile
16c1k runs with the split its launch picks.

compute-sanitizer --tool memcheck python benchmarks/micro/sp24_wgmma_memcheck.py
"""
import os

import torch
import torchquant  # noqa: F401
ops = torch.ops.torchquant

torch.manual_seed(0)
for tile in ("16c1", "16c1x2", "16c1k", "32c1", "64c1", "64c1n", "128c1", "256c1", "256c2"):
    os.environ["TORCHQUANT_SP24_WGMMA_TILE"] = tile
    # (the K-split tile also on K = 2304: 9 int8 / 18 bf16 stages, split 2 / 4 ways)
    for N, K in ((197, 384), (64, 1152)) + (((520, 2304),) if tile == "16c1k" else ()):
        w8 = torch.randint(-127, 128, (N, K), device="cuda", dtype=torch.int8)
        v8, m8 = ops.compress24(ops.prune24(w8)[0])
        wb = torch.randn(N, K, device="cuda").to(torch.bfloat16)
        vb, mb = ops.compress24(ops.prune24(wb)[0])
        for M in (1, 9, 33, 70):
            a = torch.randint(-127, 128, (M, K), device="cuda", dtype=torch.int8)
            ops.sparse24_int8_matmul(a, torch.ones(M, device="cuda"), None, v8, m8,
                                     torch.ones(N, device="cuda"), None, None, torch.bfloat16,
                                     "wgmma")
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            ops.sparse24_gemv(x, vb, mb, None, "wgmma")
torch.cuda.synchronize()
print("sp24 wgmma memcheck launches done")
