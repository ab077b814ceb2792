"""fp8_block / nvfp4 at batch sizes past the decode GEMV: the tiled GEMM
(path "tile") against the GEMV (path "mma", 16-row M tiles), dequantize +
cuBLAS (what QuantLinear ran above LAYER_GEMV_MAX_M) and bf16 F.linear on the
same shape, all in one process. Cold L2 (weight copies rotated past 3x L2),
CUDA-graph replay, median (benchmarks/timing.py). Prints one line per shape
and M and writes a CSV.

PYTHONPATH=. python benchmarks/micro/tile_vs_gemv.py --ms 17,32,64,128,256 \
    --shapes 4096x4096,6144x4096,14336x4096,4096x14336,28672x8192 --out rows.csv
"""
from __future__ import annotations

import argparse
import os
import sys

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import timing  # noqa: E402

import torchquant  # noqa: E402,F401

ops = torch.ops.torchquant


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default="fp8,nvfp4")
    ap.add_argument("--shapes", default="4096x4096,6144x4096,14336x4096,4096x14336,28672x8192")
    ap.add_argument("--ms", default="17,32,64,128,256")
    args = timing.micro_args(ap)
    if args is None:
        return
    rows = []
    for shape in args.shapes.split(","):
        N, K = (int(v) for v in shape.split("x"))
        w = torch.randn(N, K, device="cuda") * 0.02
        wb = w.to(torch.bfloat16)
        bcopies = timing.shared_copies((wb,), wb.numel() * 2)
        packs = {}
        if "fp8" in args.ops:
            q, s = ops.quantize_fp8_block(w, 128)
            packs["fp8"] = ((q, s), q.numel() + s.numel() * 4,
                            lambda x, q, s, p: ops.fp8_block_gemv(x, q, s, 128, None, p),
                            lambda x, q, s: F.linear(x, ops.dequantize_fp8_block(q, s, 128, torch.bfloat16)))
        if "nvfp4" in args.ops:
            q, s, gs = ops.quantize_nvfp4(w)
            packs["nvfp4"] = ((q, s), q.numel() + s.numel(),
                              lambda x, q, s, p, gs=gs: ops.nvfp4_gemv(x, q, s, gs, None, p),
                              lambda x, q, s, gs=gs: F.linear(x, ops.dequantize_nvfp4(q, s, gs, torch.bfloat16)))
        del w
        for M in (int(m) for m in args.ms.split(",")):
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            tb = timing.time_gpu(lambda wb_: F.linear(x, wb_), bcopies, wb.numel() * 2)["median_us"]
            line = [f"bf16 {tb:.1f}"]
            for name, (tensors, nbytes, fn, deq) in packs.items():
                copies = timing.shared_copies(tensors, nbytes)
                res = {}
                for p in ("tile", "mma"):
                    res[p] = timing.time_gpu(lambda q, s, p=p: fn(x, q, s, p), copies, nbytes)["median_us"]
                res["dequant+cublas"] = timing.time_gpu(lambda q, s: deq(x, q, s), copies, nbytes)["median_us"]
                for p, us in res.items():
                    rows.append(dict(op=name, N=N, K=K, M=M, path=p, us=round(us, 2),
                                     bf16_us=round(tb, 2), speedup_vs_bf16=round(tb / us, 3)))
                line.append(f"{name}: tile {res['tile']:.1f} gemv {res['mma']:.1f} "
                            f"deq {res['dequant+cublas']:.1f}")
            print(f"{N}x{K} M={M}: " + " | ".join(line), flush=True)
    timing.write_rows(args.out, rows)


if __name__ == "__main__":
    main()
