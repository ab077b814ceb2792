"""Small launches of the int8 gemv (int8_matmul path "gemv") with the 8-token tile's deep loads
forced on and off (TORCHQUANT_INT8_GEMV_DEEP=1 / -1), the 16-token tile with 2 and 4 loads in
flight (TORCHQUANT_INT8_GEMV_LOADS16=2 / 4) and the epilogue operands loaded before / after the
K loop (TORCHQUANT_INT8_GEMV_EPI=1 / -1), paired in that order, and the 32-token tile: odd N (a
partial 16-row block), K tails inside a 64-byte chunk and inside the deep loop's 48-chunk
stride, grids split over K (small N) and one that is not (N = 2133 on 132 SMs, where the
epilogue operands load early), asymmetric activations and a bias, for
compute-sanitizer memcheck. Prints one line when every launch is done.

compute-sanitizer --tool memcheck python benchmarks/micro/int8_gemv_memcheck.py
"""
import os

import torch
import torchquant  # noqa: F401
ops = torch.ops.torchquant

torch.manual_seed(0)
for deep, loads16, epi in (("1", "2", "1"), ("-1", "4", "-1")):
    os.environ["TORCHQUANT_INT8_GEMV_DEEP"] = deep
    os.environ["TORCHQUANT_INT8_GEMV_LOADS16"] = loads16
    os.environ["TORCHQUANT_INT8_GEMV_EPI"] = epi
    for N, K in ((37, 4096 + 16), (130, 880), (49, 14336), (529, 3072 + 48), (2133, 1024 + 48)):
        w = torch.randint(-127, 128, (N, K), device="cuda", dtype=torch.int8)
        sw = torch.rand(N, device="cuda") + 0.5
        bias = torch.randn(N, device="cuda")
        for M in (1, 5, 8, 13, 16, 32):
            a = torch.randint(-127, 128, (M, K), device="cuda", dtype=torch.int8)
            sa = torch.rand(M, device="cuda") + 0.5
            za = torch.randint(-20, 20, (M,), device="cuda", dtype=torch.int32)
            ops.int8_matmul(a, sa, za, w, sw, None, bias, torch.bfloat16, "gemv")
torch.cuda.synchronize()
print("int8 gemv memcheck launches done")
