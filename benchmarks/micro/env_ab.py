"""A/B of a launch knob: time one op per value of an environment variable that
the launch code reads on every call (each value captured in its own CUDA
graph). Cold L2 (benchmarks/timing.py).

PYTHONPATH=. python benchmarks/micro/env_ab.py --op nvfp4 --var TORCHQUANT_NVFP4_RING_SELECT \
    --values 0,1 --shapes 28672x8192,128256x4096 --ms 1,8,16 [--out rows.csv]
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--op", choices=["nvfp4", "fp8"], default="nvfp4")
    ap.add_argument("--var", required=True)
    ap.add_argument("--values", default="0,1")
    ap.add_argument("--shapes", default="28672x8192,128256x4096,14336x4096")
    ap.add_argument("--ms", default="1,8,16")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to time")
        return
    torch.manual_seed(0)
    ceiling = timing.measure_read_ceiling()["tbps"] * 1e12
    print(f"read ceiling {ceiling / 1e12:.3f} TB/s; {args.var} in {args.values}")
    rows = []
    for shape in args.shapes.split(","):
        N, K = (int(v) for v in shape.split("x"))
        w = torch.randn(N, K, device="cuda") * 0.02
        if args.op == "nvfp4":
            wp, ws, gs = ops.quantize_nvfp4(w)
            fn = lambda x, a, b: ops.nvfp4_gemv(x, a, b, gs, None, "mma")  # noqa: E731
        else:
            wp, ws = ops.quantize_fp8_block(w, 128)
            fn = lambda x, a, b: ops.fp8_block_gemv(x, a, b, 128, None, "mma")  # noqa: E731
        nbytes = wp.numel() * wp.element_size() + ws.numel() * ws.element_size()
        copies = timing.shared_copies((wp, ws), nbytes)
        del w
        for M in (int(m) for m in args.ms.split(",")):
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            line = []
            for v in args.values.split(","):
                os.environ[args.var] = v
                r = timing.time_gpu(lambda a, b: fn(x, a, b), copies, nbytes)
                os.environ.pop(args.var, None)
                pct = 100.0 * nbytes / (r["median_us"] * 1e-6) / ceiling
                rows.append(dict(op=args.op, N=N, K=K, M=M, var=args.var, value=v,
                                 us=round(r["median_us"], 2), pct=round(pct, 1)))
                line.append(f"{v}:{r['median_us']:.1f}")
            print(f"{args.op} {N}x{K} M={M}: " + "  ".join(line), flush=True)
    if args.out:
        with open(args.out, "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0]))
            wr.writeheader()
            wr.writerows(rows)


if __name__ == "__main__":
    main()
