"""The fused Llama-3-8B layer's four nvfp4 projections (qkv 6144x4096, o 4096x4096, gate_up
28672x4096, down 4096x14336; weight layout 3, bf16, path auto) back to back on the layer's three
inputs (x for qkv and gate_up, the attention output for o, h for down: bench_e2e's fused layer,
so nothing runs between the GEMVs), with environment knobs set for ONE projection's call
only (the ops read them per call, so at graph capture), to find which projection and which
kernel choice makes the chain differ from the sum of the projections timed alone. Cold L2 by
rotating layer copies, CUDA-graph replay, median (benchmarks/timing.py). Rows per M:
  chain                    every call with the knobs unset (QuantLinear's calls)
  chain P:VAR=V            projection P (0 qkv, 1 o, 2 gate_up, 3 down) with VAR=V
  chain *:VAR=V            every projection with VAR=V
  alone P                  projection P by itself (the same rotation of its own copies)
  QuantLinear              the same four projections as QuantLinear.from_float(..., "nvfp4")
                           modules (bench_e2e's "QuantLinear nvfp4" row), their own copies

PYTHONPATH=. python benchmarks/micro/nvfp4_chain_layer_env.py --ms 1,8 \
    --variant 2:TORCHQUANT_NVFP4_DIRECT_MAX_M=-1 --variant '*:TORCHQUANT_PDL=0' [--out rows.csv]
"""
from __future__ import annotations

import argparse
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import shapes as S  # noqa: E402
import timing  # noqa: E402

import torchquant  # noqa: E402,F401
from torchquant.nn import QuantLinear  # noqa: E402

ops = torch.ops.torchquant


def call(x, wp, ws, gs, env):
    """One projection with the knobs of env set around the call (restored after)."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return ops.nvfp4_gemv(x, wp, ws, gs, None, "auto", 3)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


SRC, K_IN = S.layer_inputs(S.LLAMA3_8B_LAYER_FUSED)  # which input each projection reads; K of x, attention, h


def run_chain(layers, a, envs):
    return [call(a[s], wp, ws, gs, env) for s, (wp, ws, gs), env in zip(SRC, layers, envs)]


def parse_variant(s):
    where, _, kv = s.partition(":")
    k, _, v = kv.partition("=")
    return [({k: v} if where in ("*", str(i)) else {}) for i in range(4)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ms", default="1,8")
    ap.add_argument("--variant", action="append", default=[], help="P:VAR=VALUE (P a projection 0..3 or *)")
    args = timing.micro_args(ap)
    if args is None:
        return
    shapes = [(n, k) for _, n, k in S.LLAMA3_8B_LAYER_FUSED]
    layers = []
    for n, k in shapes:
        wp, ws, gs = ops.quantize_nvfp4((torch.randn(n, k, device="cuda") / k ** 0.5).to(torch.bfloat16))
        layers.append((ops.nvfp4_relayout(wp, 3), ws, gs))
    nbytes = sum(t.numel() * t.element_size() for lay in layers for t in lay)
    copies = timing.shared_copies(tuple(t for lay in layers for t in lay), nbytes)
    alone = []
    for lay in layers:
        b = sum(t.numel() * t.element_size() for t in lay)
        alone.append((timing.shared_copies(lay, b), b))

    qlins = []
    for n, k in shapes:
        lin = torch.nn.Linear(k, n, bias=False, device="cuda", dtype=torch.bfloat16)
        qlins.append(QuantLinear.from_float(lin, "nvfp4").eval())
    qbytes = sum(b.numel() * b.element_size() for q in qlins for b in q.buffers())
    qcopies = timing.shared_copies(tuple(qlins), qbytes)

    def regroup(ts):
        return [tuple(ts[3 * i:3 * i + 3]) for i in range(4)]

    variants = [("chain", [{}] * 4)] + [(f"chain {v}", parse_variant(v)) for v in args.variant]
    rows = []
    for M in (int(m) for m in args.ms.split(",")):
        a = [torch.randn(M, k, device="cuda", dtype=torch.bfloat16) for k in K_IN]
        want = run_chain(layers, a, [{}] * 4)
        line = []
        for name, envs in variants:
            got = run_chain(layers, a, envs)  # every kernel choice gives each output within rounding
            for g, w in zip(got, want):
                assert torch.isfinite(g).all() and g.shape == w.shape, name
            r = timing.time_gpu(lambda *ts: run_chain(regroup(ts), a, envs), copies, nbytes)
            rows.append(dict(M=M, row=name, us=round(r["median_us"], 2), mode=r["mode"]))
            line.append(f"{name}: {r['median_us']:.1f}")
        r = timing.time_gpu(lambda *qs: [q(a[si]) for si, q in zip(SRC, qs)], qcopies, qbytes)
        rows.append(dict(M=M, row="QuantLinear", us=round(r["median_us"], 2), mode=r["mode"]))
        line.append(f"QuantLinear: {r['median_us']:.1f}")
        for i, (cp, b) in enumerate(alone):
            n, k = shapes[i]
            xi = torch.randn(M, k, device="cuda", dtype=torch.bfloat16)
            r = timing.time_gpu(lambda wp, ws, gs: ops.nvfp4_gemv(xi, wp, ws, gs, None, "auto", 3), cp, b)
            rows.append(dict(M=M, row=f"alone {i} {n}x{k}", us=round(r["median_us"], 2), mode=r["mode"]))
            line.append(f"{n}x{k}: {r['median_us']:.1f}")
        print(f"M={M}: " + " | ".join(line), flush=True)
    timing.write_rows(args.out, rows)


if __name__ == "__main__":
    main()
