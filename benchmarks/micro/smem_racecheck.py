"""Small launches of the decode kernels that share data through shared memory, for
compute-sanitizer racecheck and synccheck (shared-memory hazards, barrier misuse): the fp8 ring
GEMV (x in registers and x through the ring, K split over warps, both token tiles), fp8's
register kernel, the nvfp4 mma GEMV (ring, K split across blocks, per-k-warp staging; the
x-resident kernel has its own script, nvfp4_xres_memcheck.py, with the fp16 loop's block vote and
restaging), the int8 GEMV (shared-memory reduction, K split across blocks) and the 2:4 mma.sp
GEMVs. Shapes are small so the tools run in seconds; each has ragged N and a K split.

compute-sanitizer --tool racecheck --racecheck-report hazard python benchmarks/micro/smem_racecheck.py
compute-sanitizer --tool synccheck python benchmarks/micro/smem_racecheck.py
(--only fp8,nvfp4,int8,sparse24: just those ops, for a build of their sources alone)
"""
import argparse
import os

import torch
import torchquant  # noqa: F401
from torchquant import ops

ap = argparse.ArgumentParser()
ap.add_argument("--only", default="fp8,nvfp4,int8,sparse24")
ONLY = set(ap.parse_args().only.split(","))
torch.manual_seed(0)
SHAPES = ((17, 2112), (257, 4160), (33, 8192 + 64))


def knobs(**env):
    """Set the given TORCHQUANT_* variables (None: unset) and return the previous values."""
    old = {k: os.environ.get(k) for k in env}
    for k, v in env.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    return old


for N, K in SHAPES:
    w = torch.randn(N, K, device="cuda") * 0.05
    if "fp8" in ONLY:
        wq8, ws8 = ops.quantize_fp8_block(w, 64)
    if "nvfp4" in ONLY:
        wp4, s4, g4 = ops.quantize_nvfp4(w)
    wi8 = torch.randint(-127, 128, (N, K), device="cuda", dtype=torch.int8)
    for M in (1, 3, 8, 16):
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        for xr in ("", "1", "-1") if "fp8" in ONLY else ():  # the rule / XR wherever built / never
            old = knobs(TORCHQUANT_FP8_XRING=xr or None)
            ops.fp8_block_gemv(x, wq8, ws8, 64, None, "mma")
            knobs(**old)
        if "fp8" in ONLY:
            old = knobs(TORCHQUANT_FP8_REG_KERNEL="1")
            ops.fp8_block_gemv(x, wq8, ws8, 64, None, "mma")
            knobs(**old)
        for env in ({}, {"TORCHQUANT_NVFP4_SPLITK": "3"}, {"TORCHQUANT_NVFP4_GROUP_SYNC": "1"},
                    {"TORCHQUANT_NVFP4_XRES": "-1"}) if "nvfp4" in ONLY else ():
            old = knobs(**env)
            ops.nvfp4_gemv(x, wp4, s4, g4, None, "mma")
            knobs(**old)
    for M in (1, 9, 17) if "int8" in ONLY else ():
        a = torch.randint(-127, 128, (M, K), device="cuda", dtype=torch.int8)
        ops.int8_matmul(a, torch.ones(M, device="cuda"), None, wi8, torch.ones(N, device="cuda"),
                        path="gemv")
for splits in ("2", "") if "sparse24" in ONLY else ():
    old = knobs(TORCHQUANT_SP24_SPLITK=splits or None)
    for N, K in ((200, 1056), (129, 4096)):
        wd = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        vals, meta = ops.compress24(ops.prune24(wd)[0])
        wi8 = torch.randint(-127, 128, (N, K), device="cuda", dtype=torch.int8)
        v8, m8 = ops.compress24(ops.prune24(wi8)[0])
        for M in (1, 8, 16):
            ops.sparse24_gemv(torch.randn(M, K, device="cuda", dtype=torch.bfloat16), vals, meta, None, "mma")
            a = torch.randint(-127, 128, (M, K), device="cuda", dtype=torch.int8)
            ops.sparse24_int8_matmul(a, torch.ones(M, device="cuda"), None, v8, m8,
                                     torch.ones(N, device="cuda"), None, None, torch.bfloat16, "mma")
    knobs(**old)
torch.cuda.synchronize()
print("shared-memory kernels launched")
