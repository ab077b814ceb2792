"""Is the cold-L2 rotation cold enough? The same launches timed with the rotation's
copies (timing.copies_needed: R * bytes > 3x L2, at least 2) multiplied by 1, 2, 4 and 8,
so the bytes read between two reads of the same weight line grow from ~R * bytes to
8x that. Under an LRU-like L2 every multiple gives the same time; if lines survive a
reuse distance of a few x L2 (a replacement policy that keeps some of them, or the
loads' cache hints), the shortest rotation times faster. Cases (bf16 x / out):
  nvfp4 NxK          ops.nvfp4_gemv, layout 3, path auto
  nvfp4 layer        the fused Llama-3-8B layer's four nvfp4 projections back to back
                     (bench_e2e's data flow; its rotation is min_copies = 4)
  bf16 NxK / layer   F.linear, the same (cuBLAS)
  sum NxK            torch.sum over an fp32 buffer of N*K/2 bytes (the read-ceiling kernel)
  int8 NxK           ops.int8_matmul, per-channel weight, x quantized per token once, path auto
  fp8 NxK            ops.fp8_block_gemv, block 128, path auto
--cases picks among nvfp4,bf16,sum,int8,fp8,layer; --factor sets the L2 factor of the x1
rotation (3: the anchors' method). Two rounds, the multiples interleaved.

PYTHONPATH=. python benchmarks/micro/rotation_depth.py --ms 1,8 --mults 1,2,4,8 [--out rows.csv]
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
SRC, K_IN = S.layer_inputs(S.LLAMA3_8B_LAYER_FUSED)  # which input each projection reads; K of x, attention, h


def nbytes(ts):
    return sum(t.numel() * t.element_size() for t in ts)


def nvfp4_weight(n, k):
    wp, ws, gs = ops.quantize_nvfp4((torch.randn(n, k, device="cuda") / k ** 0.5).to(torch.bfloat16))
    return (ops.nvfp4_relayout(wp, 3), ws, gs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ms", default="1,8")
    ap.add_argument("--mults", default="1,2,4,8")
    ap.add_argument("--shapes", default="28672x8192,14336x4096")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cases", default="nvfp4,bf16,sum,layer")
    ap.add_argument("--factor", type=float, default=3.0)
    args = timing.micro_args(ap)
    if args is None:
        return
    l2 = timing.l2_bytes()
    mults = [int(v) for v in args.mults.split(",")]
    fused = [(n, k) for _, n, k in S.LLAMA3_8B_LAYER_FUSED]
    want = set(args.cases.split(","))
    ms = [int(m) for m in args.ms.split(",")]

    def bf16_x(*ks):  # M -> bf16 x of each width
        return lambda M: [torch.randn(M, k, device="cuda", dtype=torch.bfloat16) for k in ks]

    def int8_x(k):  # M -> x quantized per token once (int8 codes, fp32 scales)
        return lambda M: list(ops.quantize_int8(torch.randn(M, k, device="cuda", dtype=torch.bfloat16), True, True)[:2])

    cases = []  # (name, operands of one copy, fn(x_list, *operands), M -> x_list, the Ms to time)
    for sh in args.shapes.split(","):
        n, k = (int(v) for v in sh.split("x"))
        if "nvfp4" in want:
            cases.append((f"nvfp4 {sh}", nvfp4_weight(n, k),
                          lambda a, wp, ws, gs: ops.nvfp4_gemv(a[0], wp, ws, gs, None, "auto", 3), bf16_x(k), ms))
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        if "bf16" in want:
            cases.append((f"bf16 {sh}", (w,), lambda a, w: F.linear(a[0], w), bf16_x(k), ms))
        if "int8" in want:
            cases.append((f"int8 {sh}", tuple(ops.quantize_int8(w, True, True)[:2]),
                          lambda a, wq, ws: ops.int8_matmul(a[0], a[1], None, wq, ws, None, None, torch.bfloat16, "auto"),
                          int8_x(k), ms))
        if "fp8" in want:
            cases.append((f"fp8 {sh}", tuple(ops.quantize_fp8_block(w, 128)[:2]),
                          lambda a, wq, ws: ops.fp8_block_gemv(a[0], wq, ws, 128, None, "auto"), bf16_x(k), ms))
        if "sum" in want:  # no x: timed once, at the first M
            buf = torch.randn(n * k // 8, device="cuda")
            cases.append((f"sum {sh}", (buf,), lambda a, b: b.sum(), bf16_x(k), ms[:1]))
        del w
    if "layer" in want:
        lay = [t for n, k in fused for t in nvfp4_weight(n, k)]

        def nv_layer(a, *ts):
            return [ops.nvfp4_gemv(a[s], *ts[3 * i:3 * i + 3], None, "auto", 3) for i, s in enumerate(SRC)]
        cases.append(("nvfp4 layer", tuple(lay), nv_layer, bf16_x(*K_IN), ms))
        wl = tuple(torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for n, k in fused)

        def bf_layer(a, *ws):
            return [F.linear(a[s], w) for s, w in zip(SRC, ws)]
        cases.append(("bf16 layer", wl, bf_layer, bf16_x(*K_IN), ms))

    rows = []
    for name, ts, fn, make_x, case_ms in cases:
        b = nbytes(ts)
        r0 = timing.copies_needed(b, l2, l2_factor=args.factor)
        for M in case_ms:
            a = make_x(M)
            res = {m: [] for m in mults}
            for _ in range(args.rounds):
                for m in mults:
                    mk = timing.shared_copies(ts, b, min_copies=m * r0, l2_factor=args.factor)
                    t = timing.time_gpu(lambda *t_: fn(a, *t_), mk, b, min_copies=m * r0, l2_factor=args.factor)
                    res[m].append(t["median_us"])
                    rows.append(dict(case=name, M=M, mult=m, copies=t["copies"], reuse_mb=round(t["rotation_bytes"] / 2**20),
                                     us=round(t["median_us"], 2), spread=round(t["spread"], 3), mode=t["mode"]))
                    del mk
                    torch.cuda.empty_cache()
            cells = [f"x{m} ({m * r0} copies, {m * r0 * b / 2**20:.0f} MiB): " + "/".join(f"{v:.1f}" for v in res[m]) for m in mults]
            print(f"{name} M={M} ({b / 2**20:.1f} MiB per copy): " + " | ".join(cells), flush=True)
    timing.write_rows(args.out, rows)


if __name__ == "__main__":
    main()
