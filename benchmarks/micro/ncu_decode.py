"""Launch each decode kernel once for Nsight Compute.

Default: 28672x8192 at M = 1 and 16 (every kernel), and 4096x4096 at M = 1, 8,
16 (the small Llama-3-8B projection, where nvfp4's time grows with M).
--only N,K,M1/M2 (repeatable) --ops fp8,nvfp4,int8,sparse24,sparse24_int8 --paths mma narrow
the set (sparse24: the bf16 2:4 GEMV, paths fma, mma and wgmma; sparse24_int8:
sparse24_int8_matmul, paths gemv (the dp4a GEMV), mma and wgmma, so NCU_KERNEL=sparse24_int8);
--paths wgmma also launches fp8_block_gemv's and nvfp4_gemv's Hopper GEMVs (kernels
dq_gemv_sm90a_kernel, fp4_gemv_sm90a_kernel);
--dtype fp16 gives x (and the outputs) fp16 instead of bf16; --nvfp4-layouts 0,1 launches nvfp4_gemv
on both word layouts (docs/nvfp4_gemv.md 23);
--paths tile launches the tiled GEMM of fp8_block / nvfp4 (kernel dq_tile_kernel,
so profile it with --kernel-name regex:dq_tile, NCU_KERNEL=dq_tile in gpu_job.sh).

ncu --clock-control none --kernel-name regex:gemv python benchmarks/micro/ncu_decode.py
"""
import argparse

import torch
import torchquant  # noqa: F401
from torchquant import ops

ap = argparse.ArgumentParser()
ap.add_argument("--only", action="append", default=[], help="N,K,M1/M2/...")
ap.add_argument("--ops", default="fp8,nvfp4,int8")
ap.add_argument("--paths", default="fma,mma")
ap.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16", help="x's dtype")
ap.add_argument("--nvfp4-layouts", default="0",
                help="nvfp4_gemv's weight layouts to launch, e.g. 0,1 (nvfp4_relayout; 1: the bf16 decode "
                     "order, 2: the fp16 one, each with x of its dtype; paths mma and wgmma)")
args = ap.parse_args()
shapes = [(28672, 8192, (1, 16)), (4096, 4096, (1, 8, 16))]
if args.only:
    shapes = []
    for s in args.only:
        n, k, ms = s.split(",")
        shapes.append((int(n), int(k), tuple(int(m) for m in ms.split("/"))))
want = set(args.ops.split(","))
paths_wanted = args.paths.split(",")

torch.manual_seed(0)
dev = "cuda"
act = torch.float16 if args.dtype == "fp16" else torch.bfloat16
for N, K, ms in shapes:
    w = torch.randn(N, K, device=dev) * 0.02
    # quantize only for the ops asked for (a build with ONLY_SOURCES lacks the others)
    if "fp8" in want:
        wq8, ws8 = ops.quantize_fp8_block(w, 128)
    if "nvfp4" in want:
        wp4, s4, g4 = ops.quantize_nvfp4(w)
        nv_weights = {int(lay): (ops.nvfp4_relayout(wp4, int(lay)) if lay != "0" else wp4)
                      for lay in args.nvfp4_layouts.split(",")}
    if want & {"int8", "sparse24_int8"}:
        iq, isc, _ = ops.quantize_int8(w, True, True)
    if "sparse24" in want:
        sv, sm = ops.compress24(ops.prune24(w.to(act))[0])
    if "sparse24_int8" in want:
        iv, im = ops.compress24(ops.prune24(iq)[0])
    for M in ms:
        x = torch.randn(M, K, device=dev, dtype=act)
        paths = [p for p in ("fma", "mma", "tile", "wgmma") if p in paths_wanted and (N > 4096 or p != "fma")]
        for path in paths:
            if "fp8" in want:
                ops.fp8_block_gemv(x, wq8, ws8, 128, None, path)
            if "nvfp4" in want:
                for lay, wl in nv_weights.items():
                    if lay == 0 or (path in ("mma", "wgmma") and act == (torch.bfloat16 if lay == 1 else torch.float16)):
                        ops.nvfp4_gemv(x, wl, s4, g4, None, path, lay)
            if "sparse24" in want and path in ("fma", "mma", "wgmma"):
                ops.sparse24_gemv(x, sv, sm, None, path)
        if "sparse24_int8" in want:
            aq, asc, _ = ops.quantize_int8(x.float(), True, True)
            for path in [p for p in ("gemv", "mma", "wgmma") if p in paths_wanted]:
                ops.sparse24_int8_matmul(aq, asc, None, iv, im, isc, None, None, torch.bfloat16, path)
        if N > 4096 and "int8" in want:
            aq, asc, _ = ops.quantize_int8(x.float(), True, True)
            ops.int8_matmul(aq, asc, None, iq, isc, None, None, torch.bfloat16, "gemv")
torch.cuda.synchronize()
print("ok")
