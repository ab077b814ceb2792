"""nvfp4_gemv (mma path): time per forced K-split (TORCHQUANT_NVFP4_KS: warps
splitting K in a block; 8 / KS column warps) on large decode shapes, beside the
automatic choice. The knob is read on every call (each variant is its own CUDA
graph). Cold L2 (benchmarks/timing.py). Prints blocks per variant too.
Run:  PYTHONPATH=. python benchmarks/micro/nvfp4_ks_sweep.py [--out rows.csv]
"""
from __future__ import annotations

import argparse
import csv
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import timing  # noqa: E402

import torchquant  # noqa: E402,F401

ops = torch.ops.torchquant
SHAPES = [(28672, 8192), (128256, 4096), (14336, 4096), (6144, 4096), (4096, 14336)]
MS = [1, 8, 16]
KSS = ["auto", "1", "2", "4", "8"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="")
    ap.add_argument("--ms", default=",".join(map(str, MS)))
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to time")
        return
    torch.manual_seed(0)
    ms = [int(m) for m in args.ms.split(",")]
    ceiling = timing.measure_read_ceiling()["tbps"] * 1e12
    print(f"read ceiling {ceiling / 1e12:.3f} TB/s")
    rows = []
    for N, K in SHAPES:
        w = torch.randn(N, K, device="cuda") * 0.02
        wp, ws, gs = ops.quantize_nvfp4(w)
        nbytes = wp.numel() + ws.numel()
        wcopies = timing.shared_copies((wp, ws), nbytes)
        for M in ms:
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            line = []
            for ks in KSS:
                if ks == "auto":
                    os.environ.pop("TORCHQUANT_NVFP4_KS", None)
                else:
                    os.environ["TORCHQUANT_NVFP4_KS"] = ks
                r = timing.time_gpu(
                    lambda a, b: ops.nvfp4_gemv(x, a, b, gs, None, "mma"),
                    wcopies, nbytes)
                os.environ.pop("TORCHQUANT_NVFP4_KS", None)
                pct = 100.0 * nbytes / (r["median_us"] * 1e-6) / ceiling
                rows.append(dict(N=N, K=K, M=M, ks=ks, us=round(r["median_us"], 2),
                                 pct=round(pct, 1)))
                line.append(f"{ks}:{r['median_us']:.1f}")
            print(f"{N}x{K} M={M}: " + "  ".join(line), flush=True)
    if args.out:
        with open(args.out, "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0]))
            wr.writeheader()
            wr.writerows(rows)


if __name__ == "__main__":
    main()
