"""Nsight Compute of int8_matmul's wgmma GEMM (csrc/int8/int8_gemm_sm90a.cu): runs
itself under ncu with --child, profiling one launch per (shape, tile) after a warm-up,
and optionally the bf16 cuBLAS GEMM of the same shape (F.linear) beside it.

python benchmarks/micro/ncu_int8.py [--shapes MxNxK,...] [--tiles auto,128x128c1,...]
                                    [--bf16] [--full] [--out ncu_int8.txt]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

SECTIONS = ("SpeedOfLight", "MemoryWorkloadAnalysis", "LaunchStats", "Occupancy", "WarpStateStats",
            "SchedulerStats")


def child(shapes: str, tiles: str, bf16: bool) -> None:
    import torch
    import torchquant  # noqa: F401
    ops = torch.ops.torchquant
    for spec in shapes.split(","):
        M, N, K = (int(v) for v in spec.split("x"))
        a = torch.randint(-127, 128, (M, K), device="cuda", dtype=torch.int8)
        w = torch.randint(-127, 128, (N, K), device="cuda", dtype=torch.int8)
        sa, sw = torch.ones(M, device="cuda"), torch.ones(N, device="cuda")
        for tile in tiles.split(","):
            os.environ["TORCHQUANT_INT8_WGMMA_TILE"] = tile  # read per call
            for _ in range(3):
                ops.int8_matmul(a, sa, None, w, sw, None, None, torch.bfloat16, "wgmma")
            torch.cuda.synchronize()
            # a fresh weight: the profiled launch reads W from HBM (ncu also flushes caches)
            w2 = w.clone()
            print(f"profiling int8 M={M} N={N} K={K} tile={tile}", flush=True)
            torch.cuda.cudart().cudaProfilerStart()
            ops.int8_matmul(a, sa, None, w2, sw, None, None, torch.bfloat16, "wgmma")
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStop()
        os.environ.pop("TORCHQUANT_INT8_WGMMA_TILE", None)
        if bf16:
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            wb = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
            for _ in range(3):
                torch.nn.functional.linear(x, wb)
            torch.cuda.synchronize()
            print(f"profiling bf16 F.linear M={M} N={N} K={K}", flush=True)
            torch.cuda.cudart().cudaProfilerStart()
            torch.nn.functional.linear(x, wb)
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="64x4096x4096,64x1024x4096,2048x4096x4096")
    ap.add_argument("--tiles", default="auto")
    ap.add_argument("--bf16", action="store_true", help="also profile bf16 F.linear (cuBLAS)")
    ap.add_argument("--full", action="store_true", help="--set full instead of the sections")
    ap.add_argument("--out", default="ncu_int8.txt")
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        child(args.shapes, args.tiles, args.bf16)
        return
    what = ["--set", "full"] if args.full else [a for s in SECTIONS for a in ("--section", s)]
    # Without --bf16 only the int8 kernel is profiled; with it every kernel launched between
    # cudaProfilerStart / Stop (one GEMM each).
    filt = [] if args.bf16 else ["--kernel-name", "regex:int8_gemm_sm90a"]
    cmd = (["ncu", "--clock-control", "none", "--profile-from-start", "off"] + filt + what +
           [sys.executable, os.path.abspath(__file__), "--child", "--shapes", args.shapes,
            "--tiles", args.tiles] + (["--bf16"] if args.bf16 else []))
    with open(args.out, "w") as f:
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=300)
    print(f"ncu rc={rc}, report in {args.out}")
    with open(args.out) as f:
        for line in f:
            if any(k in line for k in ("Duration", "DRAM Throughput", "Memory Throughput", "Grid Size",
                                       "L2 Cache Throughput", "L1/TEX Cache Throughput",
                                       "Compute (SM) Throughput", "Cluster Size", "Block Size",
                                       "profiling ", "  void", "  nvjet", "  sm90", "int8_gemm")):
                print(line.rstrip()[:160])


if __name__ == "__main__":
    main()
