"""nvfp4_gemv (mma path): time per forced M-tile size (TORCHQUANT_NVFP4_TILE_M)
on the Llama-3-8B projection shapes at M = 2..16, beside the automatic choice.

The knob is read by the launch code on every call, so each variant is captured
into its own CUDA graph with the variable set. Cold L2 (benchmarks/timing.py).
Run:  PYTHONPATH=. python benchmarks/micro/nvfp4_tile_sweep.py [--out rows.csv]
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
SHAPES = [(4096, 4096), (1024, 4096), (14336, 4096), (4096, 14336)]
MS = [2, 4, 8, 16]
TILES = ["auto", "16", "8", "4", "2"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to time")
        return
    torch.manual_seed(0)
    rows = []
    for N, K in SHAPES:
        w = torch.randn(N, K, device="cuda") * 0.02
        wp, ws, gs = ops.quantize_nvfp4(w)
        nbytes = wp.numel() + ws.numel()
        wcopies = timing.shared_copies((wp, ws), nbytes)
        for M in MS:
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            line = []
            for tile in TILES:
                if tile != "auto" and int(tile) > max(M, 1) * 2:
                    continue
                if tile == "auto":
                    os.environ.pop("TORCHQUANT_NVFP4_TILE_M", None)
                else:
                    os.environ["TORCHQUANT_NVFP4_TILE_M"] = tile
                r = timing.time_gpu(
                    lambda a, b: ops.nvfp4_gemv(x, a, b, gs, None, "mma"),
                    wcopies, nbytes)
                os.environ.pop("TORCHQUANT_NVFP4_TILE_M", None)
                rows.append(dict(N=N, K=K, M=M, tile=tile, us=round(r["median_us"], 2)))
                line.append(f"{tile}:{r['median_us']:.2f}")
            print(f"{N}x{K} M={M}: " + "  ".join(line), flush=True)
    if args.out:
        with open(args.out, "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0]))
            wr.writeheader()
            wr.writerows(rows)


if __name__ == "__main__":
    main()
