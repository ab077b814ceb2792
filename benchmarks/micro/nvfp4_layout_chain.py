"""nvfp4 word layout 0 vs the decode order (csrc/nvfp4/nvfp4_layout.h, docs/nvfp4_gemv.md 23:
layout 1 for bf16, 2 for fp16 with --dtype fp16) on the fused Llama-3-8B decoder layer (qkv
6144x4096, o 4096x4096, gate_up 28672x4096, down 4096x14336): the four projections back to back
through torch.ops.torchquant.nvfp4_gemv, each input
the previous output (sliced to its in_features), in one process: cold L2 by rotating layer
copies, CUDA-graph replay, median (benchmarks/timing.py). Rows per M:
  l0 auto   layout 0, path auto (what QuantLinear's GEMV calls run: mma, or wgmma from M = 5)
  lL auto   the decode order L (nvfp4_relayout), path auto (the same kernels: mma, wgmma from M = 5)
  l0 mma    layout 0, path mma
  lL mma    layout L, path mma
  bf16      F.linear on the same shapes (fp16 with --dtype fp16)

PYTHONPATH=. python benchmarks/micro/nvfp4_layout_chain.py --ms 1,2,4,8,16 [--dtype fp16] [--out rows.csv]
"""
from __future__ import annotations

import argparse
import os
import sys

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import shapes as S  # noqa: E402
import timing  # noqa: E402

import torchquant  # noqa: E402,F401

ops = torch.ops.torchquant


def run_chain(layers, x, path, layout):
    """layers: 4 x (w_packed, w_scale, global_scale); the layer's data flow (pdl_ab.run_layer)."""
    h = x
    for i, (wp, ws, gs) in enumerate(layers):
        k = wp.shape[1] * 2
        h = ops.nvfp4_gemv(h[:, :k].contiguous() if h.shape[1] != k else h, wp, ws, gs, None, path, layout)
    return h


def run_dense(ws, x):
    h = x
    for w in ws:
        k = w.shape[1]
        h = F.linear(h[:, :k] if h.shape[1] != k else h, w)
    return h


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ms", default="1,2,4,8,16")
    ap.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    ap.add_argument("--env", action="append", default=[], help="VAR=VALUE held fixed for every row")
    args = timing.micro_args(ap)
    if args is None:
        return
    timing.set_env(args.env)
    dt = torch.float16 if args.dtype == "fp16" else torch.bfloat16
    lay = 2 if args.dtype == "fp16" else 1
    shapes = [(n, k) for _, n, k in S.LLAMA3_8B_LAYER_FUSED]
    dense = [(torch.randn(n, k, device="cuda") / k ** 0.5).to(dt) for n, k in shapes]
    l0 = [tuple(ops.quantize_nvfp4(w)) for w in dense]
    l1 = [(ops.nvfp4_relayout(wp, lay), ws, gs) for wp, ws, gs in l0]
    # sanity: the two layouts give the same bits on this chain
    x0 = torch.randn(1, shapes[0][1], device="cuda", dtype=dt)
    assert torch.equal(run_chain(l0, x0, "mma", 0), run_chain(l1, x0, "mma", lay))
    nbytes = sum(t.numel() * t.element_size() for lay in l0 for t in lay)
    dbytes = sum(w.numel() * 2 for w in dense)
    flat0 = tuple(t for lay in l0 for t in lay)
    flat1 = tuple(t for lay in l1 for t in lay)
    c0 = timing.shared_copies(flat0, nbytes)
    c1 = timing.shared_copies(flat1, nbytes)
    dc = timing.shared_copies(tuple(dense), dbytes)

    def regroup(ts):
        return [tuple(ts[3 * i:3 * i + 3]) for i in range(4)]

    rows = []
    for M in (int(m) for m in args.ms.split(",")):
        x = torch.randn(M, shapes[0][1], device="cuda", dtype=dt)
        line = []
        for name, copies, path, layout in (("l0 auto", c0, "auto", 0), (f"l{lay} auto", c1, "auto", lay),
                                           ("l0 mma", c0, "mma", 0), (f"l{lay} mma", c1, "mma", lay)):
            r = timing.time_gpu(lambda *ts: run_chain(regroup(ts), x, path, layout), copies, nbytes)
            rows.append(dict(M=M, dtype=args.dtype, env=" ".join(args.env), row=name, us=round(r["median_us"], 2),
                             mode=r["mode"]))
            line.append(f"{name}: {r['median_us']:.1f}")
        r = timing.time_gpu(lambda *ws: run_dense(ws, x), dc, dbytes)
        rows.append(dict(M=M, env="", row=f"{args.dtype} F.linear", us=round(r["median_us"], 2), mode=r["mode"]))
        line.append(f"{args.dtype}: {r['median_us']:.1f}")
        print(f"fused layer nvfp4 {args.dtype} M={M}: " + " | ".join(line), flush=True)
    timing.write_rows(args.out, rows)


if __name__ == "__main__":
    main()
