"""nvfp4_gemv (packed E2M1 weight, E4M3 scale per 16 along K, fp32 global
scale, bf16 activation) against bf16.

Rows per (shape, M):
  tq auto           torch.ops.torchquant.nvfp4_gemv(x, w_packed, w_scale, global_scale, kernel="auto")
  tq fma / tq mma   the forced paths ("fma" is the scalar decode path: timed for M <= --forced-max-m)
  tq auto layout1   M <= 16 on sm_80+: the same weight in layout 1 (nvfp4_relayout(w, 1), the
                    bf16 decode order QuantLinear keeps on such GPUs), path auto
  tq layout1 static  the same with static_weight=True (on sm_90 the GEMV issues its first weight
                    loads before its PDL wait; the weights here are never rewritten)
  tq auto layout3   M <= 16 on sm_80+: layout 3 (nvfp4_relayout(w, 3), layout 1's decode on
                    adjacent codes), path auto: the direct GEMV where nvfp4_gemv.cu direct_rule
                    takes it, else tq auto layout1's kernels with x unpermuted
  tq layout3 static  the same with static_weight=True
  tq prefill dequant  M > 16: dequantize_nvfp4 to bf16 + F.linear, QuantLinear's prefill path
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common as C  # noqa: E402
from shapes import Shape  # noqa: E402

OP = "nvfp4"
FORCED = ("fma", "mma")


def tq_call(x, wp, ws, gs, path: str):
    return torch.ops.torchquant.nvfp4_gemv(x, wp, ws, gs, None, path)


def tq_layout1(x, wl, ws, gs):
    return torch.ops.torchquant.nvfp4_gemv(x, wl, ws, gs, None, "auto", 1)


def tq_layout1_static(x, wl, ws, gs):
    return torch.ops.torchquant.nvfp4_gemv(x, wl, ws, gs, None, "auto", 1, True)


def tq_layout3(x, wl, ws, gs):
    return torch.ops.torchquant.nvfp4_gemv(x, wl, ws, gs, None, "auto", 3)


def tq_layout3_static(x, wl, ws, gs):
    return torch.ops.torchquant.nvfp4_gemv(x, wl, ws, gs, None, "auto", 3, True)


def prefill_dequant(x, wp, ws, gs):
    # What QuantLinear("nvfp4") runs at M > 16.
    return torch.nn.functional.linear(x, torch.ops.torchquant.dequantize_nvfp4(wp, ws, gs, x.dtype))


def make_cases(ctx: C.Ctx, shape_list: List[Shape], ms: Tuple[int, ...]) -> Iterable[C.Case]:
    dev = ctx.device
    bf16 = C.OUT_DTYPE
    for shape, w, gen in C.shape_weights(ctx, shape_list, 3000):
        N, K = shape.N, shape.K
        q, why = C.try_quantize(ctx, "quantize_nvfp4", w)
        wp, ws, gs = q if q is not None else (None, None, None)
        decode_order = (wp is not None and dev.type == "cuda" and torch.cuda.get_device_capability(dev)[0] >= 8)
        wl = torch.ops.torchquant.nvfp4_relayout(wp, 1) if decode_order else None
        w3 = torch.ops.torchquant.nvfp4_relayout(wp, 3) if decode_order else None
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
            impls += C.path_impls(ctx, "nvfp4_gemv", M, why, FORCED, tq_call, (x, wp, ws, gs), tq_bytes, flops,
                                  chk_tq, "nvfp4 torchquant")
            if wl is not None and M <= 16:
                impls.append(C.Impl(
                    name="tq auto layout1", kind="torchquant", fn=tq_layout1,
                    make_inputs=C.rotating((x, wl, ws, gs)), nbytes=tq_bytes, flops=flops, check=chk_tq))
                impls.append(C.static_impl(ctx, "nvfp4_gemv", M, why, tq_layout1_static, (x, wl, ws, gs), tq_bytes,
                                           flops, chk_tq, name="tq layout1 static"))
                impls.append(C.Impl(
                    name="tq auto layout3", kind="torchquant", fn=tq_layout3,
                    make_inputs=C.rotating((x, w3, ws, gs)), nbytes=tq_bytes, flops=flops, check=chk_tq))
                impls.append(C.static_impl(ctx, "nvfp4_gemv", M, why, tq_layout3_static, (x, w3, ws, gs), tq_bytes,
                                           flops, chk_tq, name="tq layout3 static"))
            if M > 16:
                chk_pd, lz = C.rel_check(lambda x=x: C.linear64_rows(x, deq_rows, N))
                lazies.append(lz)
                impls.append(C.Impl(
                    name="tq prefill dequant", kind="torchquant", fn=prefill_dequant,
                    make_inputs=C.rotating((x, wp, ws, gs)), nbytes=tq_bytes if not why else 0, flops=flops,
                    check=chk_pd if not why else None, series="nvfp4 prefill dequant", skip=why or None))
            impls.append(C.bf16_peer(x, w, flops, lazies))
            yield C.Case(shape, M, impls, cleanup=lazies)
            del x, impls
        del w, wp, ws, gs, wl, w3
        if dev.type == "cuda":
            torch.cuda.empty_cache()


def main(argv=None) -> int:
    return C.bench_main(OP, make_cases, argv)


if __name__ == "__main__":
    sys.exit(main())
