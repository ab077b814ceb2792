"""fp8_block prefill paths side by side, one process (cold L2, CUDA-graph replay, median;
benchmarks/timing.py): the dequantizing wgmma GEMM (_fp8_block_gemm_sm90a, auto tile and
each tile forced through TORCHQUANT_DQ_WGMMA_TILE), dequantize_fp8_block + F.linear (the path
it replaces), fp8_block_gemv "tile" (M <= --tile-max-m) and "auto" (the mma GEMV up to M = 48, M <= --gemv-max-m), and bf16 F.linear on the unquantized
weight. Every torchquant row is checked against the dequantize + F.linear output (relative
max error, printed). bf16 activations, block size 128. --format nvfp4: the same rows for the
nvfp4 weight (_nvfp4_gemm_sm90a, dequantize_nvfp4 + F.linear, nvfp4_gemv "tile" / "auto").
--tiled (fp8): also the GEMM on the tiled weight (fp8_block_tile; tiled=True, read in place, its
own rotated copies) and untile + GEMM (what QuantLinear(fp8_tiled=True) ran before 12-08).

PYTHONPATH=. python benchmarks/micro/dq_wgmma_ab.py --shapes 28672x8192,4096x4096 \
    --ms 64,128,512,2048 [--tiles 256c2,256c1,128c1] [--knob VAR=V1,V2] [--out rows.csv]
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
ENV = "TORCHQUANT_DQ_WGMMA_TILE"
BS = 128


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="28672x8192,14336x4096,4096x14336,4096x4096")
    ap.add_argument("--ms", default="64,128,512,2048")
    ap.add_argument("--tiles", default="", help="tiles to force besides auto, e.g. 256c2,128c1")
    ap.add_argument("--splits", default="", help="K splits to force besides auto, e.g. 1,2,4")
    ap.add_argument("--knob", default="", help="VAR=V1,V2: the wgmma GEMM again under each value "
                    "of an environment knob, e.g. TORCHQUANT_WGMMA_VEC=0")
    ap.add_argument("--tile-max-m", type=int, default=256)
    ap.add_argument("--gemv-max-m", type=int, default=48, help="time the op's own auto path up to this M")
    ap.add_argument("--format", choices=["fp8", "nvfp4"], default="fp8")
    ap.add_argument("--tiled", action="store_true", help="fp8: the tiled weight's rows too")
    args = timing.micro_args(ap)
    if args is None:
        return
    rows = []
    for shape in args.shapes.split(","):
        N, K = (int(v) for v in shape.split("x"))
        w = torch.randn(N, K, device="cuda") * 0.02
        if args.format == "fp8":
            w_q, w_s = ops.quantize_fp8_block(w, BS)
            deq = lambda a, b, dt: ops.dequantize_fp8_block(a, b, BS, dt)  # noqa: E731
            gemm = lambda x, a, b: ops._fp8_block_gemm_sm90a(x, a, b, BS, None)  # noqa: E731
            gemv_tile = lambda x, a, b: ops.fp8_block_gemv(x, a, b, BS, None, "tile")  # noqa: E731
            gemv_auto = lambda x, a, b: ops.fp8_block_gemv(x, a, b, BS, None, "auto")  # noqa: E731
        else:
            w_q, w_s, gs = ops.quantize_nvfp4(w)
            deq = lambda a, b, dt: ops.dequantize_nvfp4(a, b, gs, dt)  # noqa: E731
            gemm = lambda x, a, b: ops._nvfp4_gemm_sm90a(x, a, b, gs, None)  # noqa: E731
            gemv_tile = lambda x, a, b: ops.nvfp4_gemv(x, a, b, gs, None, "tile")  # noqa: E731
            gemv_auto = lambda x, a, b: ops.nvfp4_gemv(x, a, b, gs, None, "auto")  # noqa: E731
        w_bf = w.to(torch.bfloat16)
        del w
        qbytes = w_q.numel() + w_s.numel() * w_s.element_size()
        qcopies = timing.shared_copies((w_q, w_s), qbytes)
        bcopies = timing.shared_copies((w_bf,), w_bf.numel() * 2)
        tcopies = None
        if args.tiled and args.format == "fp8":
            tcopies = timing.shared_copies(tuple(ops.fp8_block_tile(w_q, w_s)), qbytes)
        for M in (int(m) for m in args.ms.split(",")):
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            flops = 2.0 * M * N * K
            want = F.linear(x, deq(w_q, w_s, torch.bfloat16)).float()
            cands = [("deq_cublas", lambda a, b: F.linear(x, deq(a, b, x.dtype)), None)]
            wg = lambda a, b: gemm(x, a, b)  # noqa: E731
            cands.append(("wgmma auto", wg, None))
            if tcopies is not None:
                cands.append(("wgmma tiled", lambda a, b: ops._fp8_block_gemm_sm90a(x, a, b, BS, None, True),
                              None, tcopies))
                cands.append(("untile + wgmma", lambda a, b: gemm(x, *ops.fp8_block_tile(a, b, True)),
                              None, tcopies))
            for t in (v for v in args.tiles.split(",") if v):
                cands.append((f"wgmma {t}", wg, (ENV, t)))
            for v in (v for v in args.splits.split(",") if v):
                cands.append((f"wgmma S={v}", wg, ("TORCHQUANT_DQ_WGMMA_SPLITS", v)))
            if args.knob:
                var, vals = args.knob.split("=", 1)
                for v in vals.split(","):
                    cands.append((f"wgmma {var}={v}", wg, (var, v)))
            if M <= args.tile_max_m:
                cands.append(("gemv tile", lambda a, b: gemv_tile(x, a, b), None))
            if M <= args.gemv_max_m:
                cands.append(("gemv auto", lambda a, b: gemv_auto(x, a, b), None))
            line = []
            for name, fn, knob, *own in cands:
                copies = own[0] if own else qcopies
                if knob:
                    os.environ[knob[0]] = knob[1]
                try:
                    y = fn(*copies(0)).float()
                    err = float(((y - want).abs().max() / want.abs().max()).item())
                    r = timing.time_gpu(fn, copies, qbytes)
                finally:
                    if knob:
                        os.environ.pop(knob[0], None)
                rows.append(dict(N=N, K=K, M=M, impl=name, us=round(r["median_us"], 1),
                                 tflops=round(flops / r["median_us"] / 1e6, 1), rel_err=f"{err:.2e}"))
                line.append(f"{name} {r['median_us']:.1f}")
            r = timing.time_gpu(lambda wb: F.linear(x, wb), bcopies, w_bf.numel() * 2)
            rows.append(dict(N=N, K=K, M=M, impl="bf16 F.linear", us=round(r["median_us"], 1),
                             tflops=round(flops / r["median_us"] / 1e6, 1), rel_err=""))
            line.append(f"bf16 {r['median_us']:.1f}")
            print(f"{N}x{K} M={M}: " + " | ".join(line), flush=True)
        del qcopies, bcopies, tcopies, w_q, w_s, w_bf
        torch.cuda.empty_cache()
    timing.write_rows(args.out, rows)


if __name__ == "__main__":
    main()
