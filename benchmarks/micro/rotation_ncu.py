"""rotation_depth.py's question asked of the memory system: launches one kernel eagerly
over R rotating copies (three warm cycles, then two cycles inside cudaProfilerStart/Stop),
so Nsight Compute with --cache-control none sees each profiled launch with the L2 as the
previous launch of the rotation left it. DRAM bytes read and the L2 hit rate per launch tell
whether lines survive a reuse distance of R copies.

ncu --profile-from-start off --cache-control none --clock-control none --replay-mode application \
    --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum --csv \
    python benchmarks/micro/rotation_ncu.py --case nvfp4 --copies 2
"""
import argparse

import torch
import torch.nn.functional as F

import torchquant  # noqa: F401

ap = argparse.ArgumentParser()
ap.add_argument("--case", choices=["nvfp4", "bf16", "sum"], default="nvfp4")
ap.add_argument("--copies", type=int, default=2)
ap.add_argument("--shape", default="28672x8192")
ap.add_argument("--m", type=int, default=1)
args = ap.parse_args()
ops = torch.ops.torchquant
torch.manual_seed(0)
n, k = (int(v) for v in args.shape.split("x"))
x = torch.randn(args.m, k, device="cuda", dtype=torch.bfloat16)
if args.case == "nvfp4":
    wp, ws, gs = ops.quantize_nvfp4((torch.randn(n, k, device="cuda") / k ** 0.5).to(torch.bfloat16))
    one = (ops.nvfp4_relayout(wp, 3), ws, gs)
    fn = lambda wp, ws, gs: ops.nvfp4_gemv(x, wp, ws, gs, None, "auto", 3)  # noqa: E731
elif args.case == "bf16":
    one = (torch.randn(n, k, device="cuda", dtype=torch.bfloat16),)
    fn = lambda w: F.linear(x, w)  # noqa: E731
else:
    one = (torch.randn(n * k // 8, device="cuda"),)
    fn = lambda b: b.sum()  # noqa: E731
copies = [tuple(t.clone() for t in one) for _ in range(args.copies)]
del one
for _ in range(3):
    for c in copies:
        fn(*c)
torch.cuda.synchronize()
torch.cuda.profiler.start()
for _ in range(2):
    for c in copies:
        fn(*c)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
