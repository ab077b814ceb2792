"""Time one decode op per value of a launch knob: an environment variable that
the launch code reads on every call (each value captured in its own CUDA graph;
"auto" leaves the variable unset). Cold L2, CUDA-graph replay, median
(benchmarks/timing.py), % of the read ceiling measured in the same process.

The knobs (tests and measurements only; docs/*.md say what each one found):
  TORCHQUANT_NVFP4_TILE_M=1..16   nvfp4 rows of x per M tile (docs/nvfp4_gemv.md 6)
  TORCHQUANT_NVFP4_KS=1|2|4|8     nvfp4 warps splitting K per block (8b)
  TORCHQUANT_NVFP4_SPLITK=S       nvfp4 K split across S blocks + an ordered reduce
                                  (1 = never; unset = the rule; docs/nvfp4_gemv.md 8b)
  TORCHQUANT_NVFP4_GROUP_SYNC=1|-1  nvfp4 per-k-warp x staging on / off (unset = the rule)
  TORCHQUANT_NVFP4_XRES=1|-1      nvfp4 x resident in shared memory on / off (unset = the
                                  rule; docs/nvfp4_gemv.md 12); -1 also drops auto's M = 5..8
                                  choice of that kernel over the wgmma GEMV (section 25)
  TORCHQUANT_NVFP4_SPREAD=1|-1    nvfp4 grids of <= one block per SM take one SM each (on
                                  by default; common/device.h spread_smem)
  TORCHQUANT_NVFP4_KS_RULE=waves  nvfp4 mma K split by the wave rule alone (unset: tiles of
                                  <= 4 rows take the KS with the fewest rows on the busiest SM;
                                  docs/nvfp4_gemv.md 17)
  TORCHQUANT_NVFP4_SMEM_MIN=B     nvfp4 mma kernels take at least B bytes of dynamic shared
                                  memory (fewer blocks per SM: an occupancy sweep)
  TORCHQUANT_NVFP4_M1_MMA_MIN=W   nvfp4 M = 1 takes mma from W * 2^20 weights (unset: 32;
                                  --path auto)
  TORCHQUANT_FP8_KSPLIT=N         fp8 K-split
  TORCHQUANT_INT8_GEMV_DEEP=1|-1  int8 gemv, 8-token tile: 6 chunks of loads in flight per lane
                                  always / never (auto: grids of <= 2 blocks per SM, or
                                  >= 16 chunks per warp)
  TORCHQUANT_INT8_GEMV_LOADS16=2|4  int8 gemv, 16-token tile (M = 9..16): 2 or 4 chunks of
                                  loads in flight per lane (auto: 2 at M >= 15, >= 16 chunks per warp, >= 12 blocks per SM)
  TORCHQUANT_INT8_GEMV_EPI=-1     int8 gemv: epilogue operands loaded after the K loop (default: before,
                                  for unsplit tiles of <= 16 tokens)
  TORCHQUANT_INT8_WGMMA_SPLITS=S  int8 wgmma GEMM K split across CTAs (1 = never)
  TORCHQUANT_INT8_WGMMA_TILE=<config>  int8 wgmma GEMM tile configuration (docs/int8_wgmma.md)
  TORCHQUANT_INT8_WGMMA_ABOX=0    int8 wgmma GEMM, one M tile: A boxes of the tile's rows (TMA
                                  zero fill) instead of round_up(M, 8) rows
  TORCHQUANT_WGMMA_VEC=0|1        the wgmma GEMMs (int8, 2:4, fp8 / nvfp4 dequantizing): 4-byte
                                  pair stores / the regrouped 16-byte ones (16-bit out,
                                  N % 8 == 0; unset: per kernel, common/sm90a_host.h)
  TORCHQUANT_FP8_REG_KERNEL=1     fp8 register-prefetch kernel instead of the ring
                                  kernel at block sizes that are multiples of 64
  TORCHQUANT_FP8_DIRECT=1|-1      fp8 auto: the direct GEMV (path "direct") wherever it can run at
                                  M <= 16 (block_size % 64 == 0, K % 64 == 0, sm_89+) / never
                                  (unset: fp8_block_gemv.cu direct_rule)
  (--op fp8 --var tiled --values 0,1: fp8_block_gemv on the row-major weight / on fp8_block_tile's
  (tiled=True), each on its own copies, path auto (the tiled weight: the direct GEMV where auto
  takes it for rows, else the ring), direct or mma (the ring kernel);
  --tiled: every value of another knob on the tiled weight; docs/fp8_gemv.md "The tiled weight")
  (--warm: one copy, no rotation: the weight from L2 where it fits, the kernel's SM-side time)
  TORCHQUANT_FP8_DIRECT_BUILD=1..5  fp8 path "direct": U = 2 / 3 blocks per SM, U = 3 / 2,
                                  U = 4 / 2 (one token tile); two token tiles U = 2 / 2, U = 1 / 3
                                  (unset: 3 at M <= 8, 4 above)
  TORCHQUANT_FP8_XRING=1|2|3|4|5  fp8 ring kernel with x copied through the ring (1: the
                                  wide rule, 2-4: that depth, 5 / unset: the narrow rule,
                                  M <= 2 and K split 16; -1: x in registers; docs/fp8_gemv.md)
  TORCHQUANT_FP8_WGMMA_M5_MIN=W   fp8 auto: the wgmma GEMV at M = 5..8 from W * 2^20 weights
                                  (unset: 256)
  TORCHQUANT_FP8_WGMMA_TILE=16x1|16x2|16x2s3  fp8 path "wgmma": one CTA per SM, or two with 5 / 3
                                  ring stages (unset: 16x2s3 on grids of more CTAs than SMs, else 16x2)
  TORCHQUANT_FP8_WGMMA_BF16=f32|reseat  fp8 path "wgmma", bf16's conversion (unset: f32)
  TORCHQUANT_DQ_WGMMA_SPLITS=S    fp8 / nvfp4 path "wgmma" and the dequantizing GEMMs: K split (1 = never)
  TORCHQUANT_NVFP4_WGMMA_TILE=16x2s3|16x2s4|16x1  nvfp4 path "wgmma": two CTAs per SM with 3 / 4
                                  stages, or one with 8 (unset: 16x2s3 on grids of more CTAs than SMs)
  TORCHQUANT_NVFP4_WGMMA_MIN_M=m  nvfp4 auto: the wgmma GEMV from M = m to 32 (unset: 5; 33: never)
  (--op nvfp4 --path gemm_sm90a: the Hopper dequantizing wgmma GEMM, torch.ops.torchquant.
  _nvfp4_gemm_sm90a, in place of nvfp4_gemv)
  (--op nvfp4 --var layout --values 0,1 (bf16) or 0,2 (--act-dtype fp16): nvfp4_gemv's layout
  argument, each layout timed on its own nvfp4_relayout copies; docs/nvfp4_gemv.md 23; layout 3
  (bf16, sections 27-29) with --path auto (the direct GEMV by direct_rule), direct, mma or wgmma;
  --layout L: every value of another knob timed on the weight in layout L; layout 4, layout 3
  tiled with its scales (nvfp4_relayout_scale), path auto or direct: docs/nvfp4_gemv.md 40)
  TORCHQUANT_NVFP4_DIRECT=1..15   the direct GEMV's load depth: U = 2 / 3 blocks per SM,
                                  U = 3 / 3, U = 4 / 2, U = 2 with the next round issued early / 2,
                                  U = 6 / 2, U = 3 issued early / 2; x loaded with the weight
                                  (docs/nvfp4_gemv.md 33): U = 2 / 2, U = 2 / 3, U = 3 / 2;
                                  32 rows per block (section 34) U = 1 / 3, U = 2 / 2; 64 rows U = 1 / 2;
                                  16 x rows per pass: 16 rows U = 1, 32 rows U = 1, 16 rows U = 2
                                  (unset: nvfp4_gemv.cu direct_build)
  TORCHQUANT_NVFP4_DIRECT_MAX_M=m  nvfp4 auto on layout 3: the direct GEMV at M <= m on any shape
                                  (-1: never; unset: direct_rule's one-wave shapes, M <= 8)
  TORCHQUANT_PDL=0|1|smem          programmatic dependent launch of the decode kernels
                                  (csrc/common/pdl.h; here one op back to back on rotating
                                  weights; benchmarks/micro/pdl_ab.py times a layer chain)
  TORCHQUANT_PDL_HOPPER_GEMV=0|1  the same for the two sm_90a decode GEMVs alone (fp8 / nvfp4
                                  path "wgmma"), the other kernels at their defaults
  TORCHQUANT_SP24_MMA=bn64s3|bn64s4|bn128s3|bn128s4  bf16/fp16 2:4 mma.sp GEMV: rows per
                                  block and ring stages (--op sparse24 --path mma)
  TORCHQUANT_SP24_SPLITK=S        the same GEMV's (and the int8 2:4 mma kernel's) K split
                                  across S blocks (1 = never)
  TORCHQUANT_SP24_SPLIT_FILL=F     the split rule: split while the grid fills <= F/2 of the SMs
  TORCHQUANT_SP24_I8MMA=bn64s3k128|bn128s4k128|bn128s3k256|bn128s4k256  int8 2:4 mma.sp
                                  kernel: rows per block, ring stages, K per chunk (--op
                                  sparse24_int8 --path mma; M <= 16)
  TORCHQUANT_SP24_META=4          the same GEMV's (and the int8 kernel's) metadata as 4-byte
                                  copies instead of 16-byte units (K % 128 == 0)
  TORCHQUANT_SP24_FMA=rw4|rw2|rw1  bf16/fp16 2:4 decode: weight rows per warp (M = 1, 2; --op
                                  sparse24 --path fma; csrc/sparse/sparse24.cu); i8w4: the int8
                                  dp4a GEMV at M = 1 with 4 rows per warp (--op sparse24_int8
                                  --path gemv)

--dense adds bf16 F.linear on an unpruned weight of the same shape (cuBLAS, same timing).

PYTHONPATH=. python benchmarks/micro/env_ab.py --op nvfp4 --var TORCHQUANT_NVFP4_KS \
    --values auto,1,2,4,8 --shapes 28672x8192,128256x4096 --ms 1,8,16 [--out rows.csv]
PYTHONPATH=. python benchmarks/micro/env_ab.py --op nvfp4 --var TORCHQUANT_NVFP4_TILE_M \
    --values auto,16,8,4,2 --shapes 4096x4096,1024x4096,14336x4096,4096x14336 --ms 2,4,8,16
PYTHONPATH=. python benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_REG_KERNEL \
    --values 0,1 --ms 9,12,16
PYTHONPATH=. python benchmarks/micro/env_ab.py --op int8 --var path --values gemv,wgmma,gemv,wgmma
    (--var path: each value is the op's path argument instead of a knob value)
"""
from __future__ import annotations

import argparse
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
    ap.add_argument("--op", choices=["nvfp4", "fp8", "int8", "sparse24", "sparse24_int8"], default="nvfp4")
    ap.add_argument("--dense", action="store_true", help="also time bf16 F.linear (cuBLAS)")
    ap.add_argument("--var", required=True, help='the knob; "path": the values are path arguments')
    ap.add_argument("--values", default="auto,1", help='comma-separated; "auto" = unset')
    ap.add_argument("--shapes", default="28672x8192,128256x4096,14336x4096")
    ap.add_argument("--ms", default="1,8,16")
    ap.add_argument("--path", default="mma", help="the op's path argument")
    ap.add_argument("--block-size", type=int, default=128, help="fp8 block size")
    ap.add_argument("--act-dtype", choices=["bf16", "fp16"], default="bf16",
                    help="activation (and --dense weight) dtype of the 16-bit ops")
    ap.add_argument("--x-min-abs", type=float, default=0.0,
                    help="raise |x| below this to it, sign kept (0: plain randn). With 2^-10, no bf16 x "
                         "falls outside fp16's exact range [2^-17, 2^16) by chance (TORCHQUANT_NVFP4_F16)")
    ap.add_argument("--x-gelu", type=float, default=0.0,
                    help="x = gelu(S * randn) in fp32, then cast (0: plain randn): an FFN down projection's "
                         "input, with the tiny negative tail that leaves fp16's exact range")
    ap.add_argument("--layout", type=int, choices=[0, 1, 2, 3, 4], default=0,
                    help="nvfp4: every value timed on the weight in this layout (1: bf16 x, 2: --act-dtype "
                         "fp16; the layout QuantLinear keeps on sm_80+), when --var is not layout")
    ap.add_argument("--tiled", action="store_true",
                    help="fp8: every value timed on the tiled weight (fp8_block_tile; fp8_block_gemv(..., "
                         "tiled=True): path auto, direct or mma), when --var is not tiled")
    ap.add_argument("--warm", action="store_true",
                    help="one copy of the weight, no rotation: from L2 where it fits (the kernel's SM side; "
                         "not a decode number)")
    ap.add_argument("--env", action="append", default=[],
                    help="VAR=VALUE set for the whole run (repeatable), e.g. a second knob")
    args = timing.micro_args(ap)
    if args is None:
        return
    if args.var == "layout" and (args.op != "nvfp4" or set(args.values.split(",")) - {"0", "1", "2", "3", "4"}):
        ap.error("--var layout: --op nvfp4 and --values from 0,1,2,3,4 (nvfp4_gemv's layout argument; 1, 3 "
                 "and 4 with bf16 x, 2 with --act-dtype fp16)")
    if args.layout and (args.op != "nvfp4" or args.var == "layout" or args.path == "gemm_sm90a"):
        ap.error("--layout: --op nvfp4 on nvfp4_gemv's paths, with a --var other than layout")
    if args.var == "tiled" and (args.op != "fp8" or set(args.values.split(",")) - {"0", "1"}):
        ap.error("--var tiled: --op fp8 and --values from 0,1 (fp8_block_gemv's tiled argument)")
    if args.tiled and (args.op != "fp8" or args.var == "tiled"):
        ap.error("--tiled: --op fp8, with a --var other than tiled")
    # --warm: one copy (l2_factor 0, min_copies 1) for the copies and every timing
    rot = dict(l2_factor=0.0, min_copies=1) if args.warm else {}
    timing.set_env(args.env)
    ceiling = timing.measure_read_ceiling()["tbps"] * 1e12
    print(f"read ceiling {ceiling / 1e12:.3f} TB/s; {args.var} in {args.values}")
    bs = args.block_size
    act = torch.float16 if args.act_dtype == "fp16" else torch.bfloat16
    dname = f"{args.act_dtype} F.linear"
    layout = [args.layout]  # nvfp4_gemv's layout argument (set per value by --var layout)
    tiled = [args.tiled]  # fp8_block_gemv's tiled argument (set per value by --var tiled)
    rows = []
    for shape in args.shapes.split(","):
        N, K = (int(v) for v in shape.split("x"))
        w = torch.randn(N, K, device="cuda") * 0.02
        if args.op == "nvfp4":
            wp, ws, gs = ops.quantize_nvfp4(w)
            if args.layout:
                wp, ws = ops.nvfp4_relayout(wp, args.layout), ops.nvfp4_relayout_scale(ws, args.layout)
            # path "gemm_sm90a": the Hopper dequantizing wgmma GEMM (QuantLinear's prefill op)
            fn = lambda x, a, b: (ops._nvfp4_gemm_sm90a(x, a, b, gs, None)  # noqa: E731
                                  if args.path == "gemm_sm90a" else
                                  ops.nvfp4_gemv(x, a, b, gs, None, args.path, layout[0]))
        elif args.op == "fp8":
            wp, ws = ops.quantize_fp8_block(w, bs)
            if args.tiled:
                wp, ws = ops.fp8_block_tile(wp, ws)
            fn = lambda x, a, b: ops.fp8_block_gemv(x, a, b, bs, None, args.path, False, tiled[0])  # noqa: E731
        elif args.op == "sparse24":  # bf16 2:4: values + meta
            wp, ws = ops.compress24(ops.prune24(w.to(act))[0])
            fn = lambda x, a, b: ops.sparse24_gemv(x, a, b, None, args.path)  # noqa: E731
        elif args.op == "sparse24_int8":  # int8 2:4 W8A8: values + meta, per-row scales
            wq8, wsc, _ = ops.quantize_int8(w)
            wp, ws = ops.compress24(ops.prune24(wq8)[0])
            fn = lambda x, a, b: ops.sparse24_int8_matmul(  # noqa: E731
                x[0], x[1], None, a, b, wsc, None, None, torch.bfloat16, args.path)
        else:  # int8 W8A8: int8 activations with per-token scales, bf16 out
            wp, ws, _ = ops.quantize_int8(w)
            fn = lambda x, a, b: ops.int8_matmul(  # noqa: E731
                x[0], x[1], None, a, b, None, None, torch.bfloat16, args.path)
        w_bf = w.to(act) if args.dense else None
        del w
        nbytes = wp.numel() * wp.element_size() + ws.numel() * ws.element_size()
        copies = timing.shared_copies((wp, ws), nbytes, **rot)
        # Values timed on their own copies of the weight: --var layout (nvfp4), nvfp4_gemv's layout
        # argument on the weight in that layout (nvfp4_relayout; layout 4 with its tiled scales);
        # --var tiled (fp8), value 1 on fp8_block_tile's copies.
        by_layout = None
        if args.var == "layout":
            by_layout = {v: copies if v == "0" else timing.shared_copies(
                             (ops.nvfp4_relayout(wp, int(v)), ops.nvfp4_relayout_scale(ws, int(v))), nbytes, **rot)
                         for v in set(args.values.split(","))}
        elif args.var == "tiled":
            by_layout = {"0": copies, "1": timing.shared_copies(ops.fp8_block_tile(wp, ws), nbytes, **rot)}
        dcopies = timing.shared_copies((w_bf,), w_bf.numel() * 2, **rot) if args.dense else None
        for M in (int(m) for m in args.ms.split(",")):
            x = torch.randn(M, K, device="cuda", dtype=act)
            if args.x_gelu > 0:
                x = torch.nn.functional.gelu(args.x_gelu * torch.randn(M, K, device="cuda")).to(act)
            if args.x_min_abs > 0:
                x = torch.where(x.abs() < args.x_min_abs, torch.copysign(torch.full_like(x, args.x_min_abs), x), x)
            if args.op in ("int8", "sparse24_int8"):
                x = ops.quantize_int8(x)
            line = []
            for v in args.values.split(","):
                os.environ.pop(args.var, None)
                if args.var == "path":  # the values are the op's path argument, no knob
                    args.path = v
                elif args.var == "layout":
                    layout[0] = int(v)
                elif args.var == "tiled":
                    tiled[0] = v == "1"
                elif v != "auto":
                    os.environ[args.var] = v
                try:
                    r = timing.time_gpu(lambda a, b: fn(x, a, b), by_layout[v] if by_layout else copies, nbytes,
                                        **rot)
                finally:
                    os.environ.pop(args.var, None)
                pct = 100.0 * nbytes / (r["median_us"] * 1e-6) / ceiling
                rows.append(dict(op=args.op, N=N, K=K, M=M, env=" ".join(args.env), var=args.var,
                                 value=v, us=round(r["median_us"], 2), pct=round(pct, 1)))
                line.append(f"{v}:{r['median_us']:.1f}")
            if args.dense:
                xd = x if args.op not in ("int8", "sparse24_int8") else torch.randn(M, K, device="cuda", dtype=act)
                r = timing.time_gpu(lambda wb: torch.nn.functional.linear(xd, wb), dcopies, w_bf.numel() * 2, **rot)
                rows.append(dict(op=dname, N=N, K=K, M=M, env="", var="", value="",
                                 us=round(r["median_us"], 2),
                                 pct=round(100.0 * w_bf.numel() * 2 / (r["median_us"] * 1e-6) / ceiling, 1)))
                line.append(f"{args.act_dtype}:{r['median_us']:.1f}")
            print(f"{args.op} {N}x{K} M={M}: " + "  ".join(line), flush=True)
    timing.write_rows(args.out, rows)


if __name__ == "__main__":
    main()
