"""Nsight Compute of int8_matmul's wgmma GEMM on small-M shapes (the per-CTA
k-loop rate question in csrc/int8/int8_gemm_sm90a.cu): runs itself under ncu
with --child, profiling one launch per shape after a warm-up.

python benchmarks/micro/ncu_int8.py [--shapes 64x4096x4096,...] [--out ncu_int8.txt]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys


def child(shapes: str) -> None:
    import torch
    import torchquant  # noqa: F401
    ops = torch.ops.torchquant
    for spec in shapes.split(","):
        M, N, K = (int(v) for v in spec.split("x"))
        a = torch.randint(-127, 128, (M, K), device="cuda", dtype=torch.int8)
        w = torch.randint(-127, 128, (N, K), device="cuda", dtype=torch.int8)
        sa, sw = torch.ones(M, device="cuda"), torch.ones(N, device="cuda")
        for _ in range(3):
            ops.int8_matmul(a, sa, None, w, sw, None, None, torch.bfloat16, "wgmma")
        torch.cuda.synchronize()
        # a fresh weight: the profiled launch reads W from HBM (ncu also flushes caches)
        w2 = w.clone()
        torch.cuda.cudart().cudaProfilerStart()
        ops.int8_matmul(a, sa, None, w2, sw, None, None, torch.bfloat16, "wgmma")
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="64x4096x4096,64x1024x4096,2048x4096x4096")
    ap.add_argument("--out", default="ncu_int8.txt")
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        child(args.shapes)
        return
    cmd = ["ncu", "--clock-control", "none", "--profile-from-start", "off", "--kernel-name",
           "regex:int8_gemm_sm90a", "--section", "SpeedOfLight", "--section", "MemoryWorkloadAnalysis",
           "--section", "LaunchStats", "--section", "Occupancy", "--section", "WarpStateStats",
           "--section", "SchedulerStats", sys.executable, os.path.abspath(__file__), "--child",
           "--shapes", args.shapes]
    with open(args.out, "w") as f:
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=240)
    print(f"ncu rc={rc}, report in {args.out}")
    with open(args.out) as f:
        for line in f:
            if any(k in line for k in ("Duration", "DRAM Throughput", "Memory Throughput", "Grid Size",
                                       "Stall", "Issued Warp", "int8_gemm")):
                print(line.rstrip()[:160])


if __name__ == "__main__":
    main()
