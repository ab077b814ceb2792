"""nvfp4_gemv's x-resident mma kernel (kXRes) forced, unsplit and split across blocks, at
every KS, for compute-sanitizer memcheck: the staging of the rows' groups (several rounds of
loads per thread where rows x K range exceeds one, a partial last round), rows past M and
N, K tails; bf16 x on the fp16 loop (kF16), on its bf16 fallback (a value fp16 cannot hold,
so the block stages again) and on the bf16 kernel; then auto at M = 5..8 where it takes this
kernel over the wgmma GEMV, in the decode-order layouts too. Run alone or from ring_memcheck.py:

compute-sanitizer --tool memcheck python benchmarks/micro/nvfp4_xres_memcheck.py
compute-sanitizer --tool racecheck python benchmarks/micro/nvfp4_xres_memcheck.py --auto-only
"""
import os
import sys

import torch
import torchquant  # noqa: F401
from torchquant import ops

KNOBS = ("TORCHQUANT_NVFP4_XRES", "TORCHQUANT_NVFP4_KS", "TORCHQUANT_NVFP4_SPLITK", "TORCHQUANT_NVFP4_F16")
torch.manual_seed(0)
auto_only = "--auto-only" in sys.argv  # just the auto M = 5..8 part (a shorter racecheck run)
os.environ["TORCHQUANT_NVFP4_XRES"] = "1"
try:
    for ks in (() if auto_only else ("1", "2", "8")):
        os.environ["TORCHQUANT_NVFP4_KS"] = ks
        for splits in ("1", "3"):
            os.environ["TORCHQUANT_NVFP4_SPLITK"] = splits
            for N, K in ((17, 2112), (257, 4160), (33, 8192 + 64)):
                w = torch.randn(N, K, device="cuda") * 0.05
                wp4, s4, g4 = ops.quantize_nvfp4(w)
                for M in (1, 2, 3, 4, 5, 7, 8):
                    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
                    for f16 in ("1", "-1"):
                        os.environ["TORCHQUANT_NVFP4_F16"] = f16
                        ops.nvfp4_gemv(x, wp4, s4, g4, None, "mma")
                    x[M - 1, K // 2] = 1.0e5  # F16=1: staged again as bf16
                    os.environ["TORCHQUANT_NVFP4_F16"] = "1"
                    ops.nvfp4_gemv(x, wp4, s4, g4, None, "mma")
    # auto at M = 5..8 on a grid of SMs - 4 blocks (the x-resident mma kernel instead of the wgmma
    # GEMV, nvfp4_gemv.cu mma_xres_one_wave), layouts 0 and 1 / 2, both dtypes, ragged N.
    for var in KNOBS:
        os.environ.pop(var, None)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    N, K = 64 * (sms - 4) - 3, 4096
    w = torch.randn(N, K, device="cuda") * 0.05
    wp4, s4, g4 = ops.quantize_nvfp4(w)
    for dtype, layout in ((torch.bfloat16, 1), (torch.float16, 2)):
        wl = ops.nvfp4_relayout(wp4, layout)
        for M in (5, 6, 7, 8):
            x = torch.randn(M, K, device="cuda", dtype=dtype)
            ops.nvfp4_gemv(x, wp4, s4, g4, None, "auto")
            ops.nvfp4_gemv(x, wl, s4, g4, None, "auto", layout)
    torch.cuda.synchronize()
finally:
    for var in KNOBS:
        os.environ.pop(var, None)
print("nvfp4 x-resident launches done")
