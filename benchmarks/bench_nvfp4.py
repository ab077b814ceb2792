"""nvfp4_gemv (packed E2M1 weight, E4M3 scale per 16 along K, fp32 global
scale, bf16 activation) against bf16.

Rows per (shape, M):
  tq auto           torch.ops.torchquant.nvfp4_gemv(x, w_packed, w_scale, global_scale, kernel="auto")
  tq fma / tq mma   the forced paths ("fma" is the scalar decode path: timed for M <= --forced-max-m)
  peer:
  bf16 F.linear     the unquantized layer
(Hopper has no FP4 tensor cores and torch has no NVFP4 GEMM for sm_90, so bf16
is the peer; the cross-format plots put nvfp4 beside fp8 and int8.)

Bytes per launch: packed weight N*K/2 + block scales N*K/16 + 4 (global) +
activation + output, i.e. 0.5625 B per weight as in ../shared/design/anchors.md.

Correctness, every timed row: against float64 over the dequantized weight,
gated by the fp32-accumulation bound; bf16 with a relative sanity gate.
"""

from __future__ import annotations

import os
import sys
from typing import Iterable, List, Tuple

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common as C  # noqa: E402
from shapes import Shape  # noqa: E402

OP = "nvfp4"
FORCED = ("fma", "mma")
DECODE_ONLY = ("fma",)


def _tq_skip(ctx: C.Ctx, kernel: str, M: int, why: str = "") -> str:
    if why:
        return why
    if not C.has_kernel("nvfp4_gemv", ctx.device):
        return f"nvfp4_gemv has no {ctx.device.type} kernel in this build"
    if kernel != "auto" and not ctx.on_gpu:
        return "CUDA-only path"
    if kernel in DECODE_ONLY and M > ctx.forced_max_m:
        return f"decode-only path, timed for M <= {ctx.forced_max_m}"
    return ""


def make_cases(ctx: C.Ctx, shape_list: List[Shape], ms: Tuple[int, ...]) -> Iterable[C.Case]:
    dev = ctx.device
    bf16 = C.OUT_DTYPE
    gen = torch.Generator(device=dev)
    for shape in shape_list:
        N, K = shape.N, shape.K
        gen.manual_seed(3000 + N + 7 * K)
        w = torch.randn(N, K, device=dev, dtype=bf16, generator=gen)
        q, why = C.try_quantize(ctx, "quantize_nvfp4", w)
        wp, ws, gs = q if q is not None else (None, None, None)
        def deq_rows(n0, n1, wp=wp, ws=ws, gs=gs):
            return C.deq_nvfp4(wp[n0:n1], ws[n0:n1], gs)

        for M in ms:
            x = torch.randn(M, K, device=dev, dtype=bf16, generator=gen)
            flops = 2.0 * M * N * K
            lazies: List[C.Lazy] = []
            chk_tq, lz = C.float_check(x, deq_rows, N, bf16)
            lazies.append(lz)
            tq_bytes = C.nbytes(x, wp, ws, gs) + M * N * 2
            impls: List[C.Impl] = []
            for kernel in ("auto",) + FORCED:
                impls.append(
                    C.Impl(
                        name=f"tq {kernel}",
                        kind="torchquant",
                        fn=lambda x, wp, ws, gs, kernel=kernel: torch.ops.torchquant.nvfp4_gemv(
                            x, wp, ws, gs, None, kernel
                        ),
                        make_inputs=C.rotating((x, wp, ws, gs)),
                        nbytes=tq_bytes,
                        flops=flops,
                        check=chk_tq,
                        series="nvfp4 torchquant" if kernel == "auto" else None,
                        skip=_tq_skip(ctx, kernel, M, why) or None,
                    )
                )
            chk_bf16, lz = C.rel_check(lambda x=x, w=w: C.linear64_rows(x, lambda a, b: w[a:b], N))
            lazies.append(lz)
            impls.append(
                C.Impl(
                    name="bf16 F.linear",
                    kind="peer",
                    fn=F.linear,
                    make_inputs=C.rotating((x, w)),
                    nbytes=C.nbytes(x, w) + M * N * 2,
                    flops=flops,
                    check=chk_bf16,
                    peer_key="bf16",
                    series="bf16 F.linear",
                )
            )
            yield C.Case(shape, M, impls, cleanup=lazies)
            del x, impls
        del w, wp, ws, gs
        if dev.type == "cuda":
            torch.cuda.empty_cache()


def main(argv=None) -> int:
    return C.bench_main(OP, make_cases, argv)


if __name__ == "__main__":
    sys.exit(main())
