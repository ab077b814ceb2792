"""Small launches of the cp.async-ring GEMV paths (fp8, nvfp4 aligned K,
int8 aligned K), the int8 wgmma split-K and the vectorized dequantize /
activation-quantize kernels, nvfp4 with x resident in shared memory, the 2:4
mma.sp GEMVs (bf16 and int8, split K, every int8 launch shape) for
compute-sanitizer memcheck: ragged N (rows past N), K tails inside a stage, split K.

compute-sanitizer --tool memcheck python benchmarks/micro/ring_memcheck.py
"""
import os
import runpy

import torch
import torchquant  # noqa: F401
from torchquant import ops

torch.manual_seed(0)
for N, K in ((17, 320), (1, 192), (33, 8192 + 64), (257, 2112)):
    w = torch.randn(N, K, device="cuda") * 0.05
    wq8, ws8 = ops.quantize_fp8_block(w, 64)
    wp4, s4, g4 = ops.quantize_nvfp4(w)
    for M in (1, 3, 8, 16):
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        ops.fp8_block_gemv(x, wq8, ws8, 64, None, "mma")
        if K % 64 == 0:
            ops.nvfp4_gemv(x, wp4, s4, g4, None, "mma")
    wi8 = torch.randint(-127, 128, (N, K), device="cuda", dtype=torch.int8)
    for M in (1, 9, 17, 32):
        a = torch.randint(-127, 128, (M, K), device="cuda", dtype=torch.int8)
        ops.int8_matmul(a, torch.ones(M, device="cuda"), None, wi8, torch.ones(N, device="cuda"),
                        path="gemv")
    for M in (1, 17):  # quantize_fp8_act: the 4-element kernel (K % 128 == 0) and the generic one
        xa = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        ops.quantize_fp8_act(xa, 128)
        ops.quantize_fp8_act(xa, 64)
    for od in (torch.float32, torch.bfloat16):
        ops.dequantize_fp8_block(wq8, ws8, 64, od)
        ops.dequantize_nvfp4(wp4, s4, g4, od)
# The variants behind launch knobs, forced: nvfp4 K split across blocks and
# per-k-warp x staging (each the default on some shapes), fp8's
# register-prefetch kernel at block sizes that are multiples of 64.
for var, val in (("TORCHQUANT_NVFP4_SPLITK", "3"), ("TORCHQUANT_NVFP4_GROUP_SYNC", "1"),
                 ("TORCHQUANT_FP8_REG_KERNEL", "1")):
    os.environ[var] = val
    for N, K in ((17, 2112), (257, 4160)):
        w = torch.randn(N, K, device="cuda") * 0.05
        wq8, ws8 = ops.quantize_fp8_block(w, 64)
        wp4, s4, g4 = ops.quantize_nvfp4(w)
        for M in (1, 3, 9, 16, 17):
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            if var.startswith("TORCHQUANT_NVFP4"):
                ops.nvfp4_gemv(x, wp4, s4, g4, None, "mma")
            else:
                ops.fp8_block_gemv(x, wq8, ws8, 64, None, "mma")
    del os.environ[var]
# nvfp4 with x resident in shared memory (kXRes): its own script, also run alone.
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvfp4_xres_memcheck.py"))
# The 2:4 mma.sp GEMVs (bf16 and int8) with K split across blocks and every
# int8 launch shape: the partial buffers, the reduce kernels, rows past N and M.
for splits in ("2", "3", ""):
    os.environ["TORCHQUANT_SP24_SPLITK"] = splits
    for N, K in ((200, 1056), (129, 4096)):
        wd = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        vals, meta = ops.compress24(ops.prune24(wd)[0])
        wi8 = torch.randint(-127, 128, (N, K), device="cuda", dtype=torch.int8)
        v8, m8 = ops.compress24(ops.prune24(wi8)[0])
        for M in (3, 8, 16):
            ops.sparse24_gemv(torch.randn(M, K, device="cuda", dtype=torch.bfloat16), vals, meta, None, "mma")
            a = torch.randint(-127, 128, (M, K), device="cuda", dtype=torch.int8)
            for shape in ("bn64s3k128", "bn128s4k128", "bn128s3k256", "bn128s4k256"):
                os.environ["TORCHQUANT_SP24_I8MMA"] = shape
                ops.sparse24_int8_matmul(a, torch.ones(M, device="cuda"), None, v8, m8,
                                         torch.ones(N, device="cuda"), None, None, torch.bfloat16, "mma")
            del os.environ["TORCHQUANT_SP24_I8MMA"]
del os.environ["TORCHQUANT_SP24_SPLITK"]
# int8 wgmma GEMM with K split across CTAs (sm_90): workspace adds, counters,
# the last split's reload; ragged M, N and a K tail.
if torch.cuda.get_device_capability() == (9, 0):
    for splits in ("3", ""):
        os.environ["TORCHQUANT_INT8_WGMMA_SPLITS"] = splits
        for M, N, K in ((64, 4096, 4096), (300, 1001, 4096 + 16)):
            a = torch.randint(-127, 128, (M, K), device="cuda", dtype=torch.int8)
            wi8 = torch.randint(-127, 128, (N, K), device="cuda", dtype=torch.int8)
            ops.int8_matmul(a, torch.ones(M, device="cuda"), None, wi8, torch.ones(N, device="cuda"),
                            out_dtype=torch.bfloat16, path="wgmma")
    del os.environ["TORCHQUANT_INT8_WGMMA_SPLITS"]
torch.cuda.synchronize()
print("ring memcheck script: ok")
