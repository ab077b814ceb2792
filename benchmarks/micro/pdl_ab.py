"""A/B of programmatic dependent launch (TORCHQUANT_PDL, csrc/common/pdl.h) on the fused
Llama-3-8B decoder layer (qkv 6144x4096, o 4096x4096, gate_up 28672x4096, down 4096x14336)
through QuantLinear, at decode M: the layer's four projections back to back, once per mode
(--modes: TORCHQUANT_PDL values, "0" off, "1", "smem"; "auto" leaves it unset; --var names
another launch knob to vary instead, e.g. TORCHQUANT_SP24_SPLIT_FILL),
in one process (cold L2 by rotating layer copies, CUDA-graph replay, median;
benchmarks/timing.py). F.linear on the same shapes, in the model's dtype (--dtype bf16 | fp16),
is the reference row. Each
projection's input is the previous projection's output (sliced / padded to its in_features,
so every GEMV depends on the kernel right before it, as in a real layer chain).

PYTHONPATH=. python benchmarks/micro/pdl_ab.py --formats fp8_block,nvfp4 --ms 1,8 \
    --modes 0,1,smem,auto [--out rows.csv]
"""
from __future__ import annotations

import argparse
import copy
import os
import sys

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import shapes as S  # noqa: E402
import timing  # noqa: E402

import torchquant  # noqa: E402,F401
from torchquant.nn import QuantLinear  # noqa: E402


def layer_bytes(mods) -> int:
    return sum(sum(b.numel() * b.element_size() for b in m.buffers()) for m in mods)


def run_layer(mods, x):
    """qkv(x); o(first K of qkv's output); gate_up(o's output); down(first 14336 of gate_up's)."""
    h = mods[0](x)
    h = mods[1](h[:, : mods[1].in_features])
    h = mods[2](h)
    return mods[3](h[:, : mods[3].in_features])


def run_dense(ws, x):
    h = F.linear(x, ws[0])
    h = F.linear(h[:, : ws[1].shape[1]], ws[1])
    h = F.linear(h, ws[2])
    return F.linear(h[:, : ws[3].shape[1]], ws[3])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--formats", default="fp8_block,nvfp4")
    ap.add_argument("--ms", default="1,8")
    ap.add_argument("--modes", default="0,1")
    ap.add_argument("--var", default="TORCHQUANT_PDL", help="the environment variable --modes sets")
    ap.add_argument("--env", action="append", default=[], help="VAR=VALUE held fixed for every mode")
    ap.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16",
                    help="the model's dtype (activations, dense weights, outputs)")
    args = timing.micro_args(ap)
    if args is None:
        return
    timing.set_env(args.env)
    dt = torch.float16 if args.dtype == "fp16" else torch.bfloat16
    shapes = [(n, k) for _, n, k in S.LLAMA3_8B_LAYER_FUSED]
    dense = [(torch.randn(n, k, device="cuda") / k ** 0.5).to(dt) for n, k in shapes]
    rows = []
    dbytes = sum(w.numel() * 2 for w in dense)
    dcopies = timing.shared_copies(tuple(dense), dbytes)
    for fmt in args.formats.split(","):
        mods = []
        for w in dense:
            lin = torch.nn.Linear(w.shape[1], w.shape[0], bias=False, device="cuda", dtype=dt)
            with torch.no_grad():
                lin.weight.copy_(w)
            mods.append(QuantLinear.from_float(lin, format=fmt).cuda())
        nbytes = layer_bytes(mods)
        r = timing.copies_needed(nbytes, timing.l2_bytes())
        copies = [mods] + [[copy.deepcopy(m) for m in mods] for _ in range(r - 1)]
        torch.cuda.synchronize()
        for M in (int(m) for m in args.ms.split(",")):
            x = torch.randn(M, shapes[0][1], device="cuda", dtype=dt)
            line = []
            for mode in args.modes.split(","):
                if mode != "auto":
                    os.environ[args.var] = mode
                try:
                    res = timing.time_gpu(lambda *ms: run_layer(ms, x), lambda i: tuple(copies[i % r]), nbytes)
                finally:
                    os.environ.pop(args.var, None)
                rows.append(dict(format=fmt, M=M, env=" ".join(args.env), var=args.var, value=mode, us=round(res["median_us"], 2), mode=res["mode"]))
                line.append(f"{mode}: {res['median_us']:.1f}")
            res = timing.time_gpu(lambda *ws: run_dense(ws, x), dcopies, dbytes)
            rows.append(dict(format=f"{args.dtype} F.linear", M=M, env="", var="", value="", us=round(res["median_us"], 2), mode=res["mode"]))
            line.append(f"{args.dtype}: {res['median_us']:.1f}")
            print(f"fused layer {fmt} {args.dtype} M={M}: " + " | ".join(line), flush=True)
        del copies, mods
        torch.cuda.empty_cache()
    timing.write_rows(args.out, rows)


if __name__ == "__main__":
    main()
