"""fp8_block_gemv (mma path) at M = 9..16: the register-prefetch kernel with
16-row tiles (default) against the cp.async-ring kernel in 8-row tiles
(TORCHQUANT_FP8_RING_TILES=1), on the Llama-3 decode shapes. Cold L2,
CUDA-graph replay (benchmarks/timing.py); each variant captured with the knob set.
Run:  PYTHONPATH=. python benchmarks/micro/fp8_m16_ring.py [--out rows.csv]
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
SHAPES = [(4096, 4096), (1024, 4096), (14336, 4096), (4096, 14336), (28672, 8192), (128256, 4096)]
MS = [9, 12, 16]


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
        wq, ws = ops.quantize_fp8_block(w, 128)
        nbytes = wq.numel() + ws.numel() * 4
        wcopies = timing.shared_copies((wq, ws), nbytes)
        for M in MS:
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            res = {}
            for ring in ("0", "1"):
                os.environ["TORCHQUANT_FP8_RING_TILES"] = ring
                r = timing.time_gpu(
                    lambda a, b: ops.fp8_block_gemv(x, a, b, 128, None, "mma"),
                    wcopies, nbytes)
                os.environ.pop("TORCHQUANT_FP8_RING_TILES", None)
                res[ring] = r["median_us"]
                rows.append(dict(N=N, K=K, M=M, ring_tiles=ring, us=round(r["median_us"], 2)))
            print(f"{N}x{K} M={M}: register 16-row {res['0']:.2f} us, ring 8-row {res['1']:.2f} us",
                  flush=True)
    if args.out:
        with open(args.out, "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0]))
            wr.writeheader()
            wr.writerows(rows)


if __name__ == "__main__":
    main()
