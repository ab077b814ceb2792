"""int8_matmul (W8A8, per-channel weight scale, per-token activation scale)
against what torch offers for the same job.

Rows per (shape, M):
  tq auto         torch.ops.torchquant.int8_matmul(..., kernel="auto"), bf16 out
  tq gemv/mma/wgmma  the forced paths ("gemv" is decode-only: timed for M <= --forced-max-m)
  tq auto static  the same with static_weight=True (M <= 32, GPU only): on sm_90 the gemv's first
                  weight loads are issued before its PDL wait (the weights here are never rewritten)
  tq auto+quant   quantize_int8(x) + int8_matmul: what a W8A8 layer pays per call
  peers:
  bf16 F.linear   the unquantized layer (cuBLAS bf16)
  _int_mm         torch._int_mm alone (int32 out, no scaling): cuBLAS's int8 GEMM
  _int_mm+scale   torch._int_mm + int32 -> fp32 * a_scale * w_scale -> bf16, the
                  scaling it needs to be a drop-in. _int_mm needs M > 16 and K, N
                  multiples of 8 on CUDA: n/a otherwise.
The activation is quantized outside the timed region for every row except
"tq auto+quant" (both torchquant and _int_mm get the same a_q, a_scale).

Correctness, every timed row, against float64: torchquant and _int_mm+scale
against the exact integer product scaled in float64, gated by the fp32
epilogue + bf16 rounding bound; _int_mm against the exact integers; bf16 with
a relative-error sanity gate.
"""

from __future__ import annotations

import os
import sys
from typing import Iterable, List, Tuple

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common as C  # noqa: E402
from shapes import Shape  # noqa: E402

OP = "int8"
FORCED = ("gemv", "mma", "wgmma")  # CUDA paths of int8_matmul (csrc/torchquant.cpp)


def local_quant_rowwise(t: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Symmetric per-row int8 (only when torchquant is not importable, for the peers)."""
    s = t.float().abs().amax(1).clamp_min(1e-12) / 127.0
    q = torch.round(t.float() / s[:, None]).clamp(-128, 127).to(torch.int8)
    return q, s


def tq_call(a_q, a_s, w_q, w_s, path: str):
    return torch.ops.torchquant.int8_matmul(a_q, a_s, None, w_q, w_s, None, None, C.OUT_DTYPE, path)


def make_cases(ctx: C.Ctx, shape_list: List[Shape], ms: Tuple[int, ...]) -> Iterable[C.Case]:
    dev = ctx.device
    bf16 = C.OUT_DTYPE
    for shape, w, gen in C.shape_weights(ctx, shape_list, 1000):
        N, K = shape.N, shape.K
        q, why_w = C.try_quantize(ctx, "quantize_int8", w, True, True)
        w_q, w_s = q[:2] if q is not None else local_quant_rowwise(w)
        for M in ms:
            x = torch.randn(M, K, device=dev, dtype=bf16, generator=gen)
            qa, why = C.try_quantize(ctx, "quantize_int8", x, True, True) if not why_w else (None, why_w)
            a_q, a_s = qa[:2] if qa is not None else local_quant_rowwise(x)
            flops = 2.0 * M * N * K
            chk_q, ref_q = C.int8_check(a_q, a_s, w_q, w_s, bf16)
            ref_int = C.Lazy(lambda a_q=a_q, w_q=w_q: C.linear64_rows(a_q, lambda a, b: w_q[a:b], N))

            def chk_int(out, ref_int=ref_int):
                return C.check_bound(out, ref_int(), torch.full_like(ref_int(), 0.5), "exact int32")

            q_bytes = C.nbytes(w_q, w_s, a_q, a_s) + M * N * 2
            impls: List[C.Impl] = []
            impls += C.path_impls(ctx, "int8_matmul", M, why, FORCED, tq_call, (a_q, a_s, w_q, w_s), q_bytes, flops,
                                  chk_q, "int8 torchquant")

            if M <= 32:  # the gemv range, where static_weight acts
                impls.append(C.static_impl(
                    ctx, "int8_matmul", M, why,
                    lambda a_q, a_s, w_q, w_s: torch.ops.torchquant.int8_matmul(
                        a_q, a_s, None, w_q, w_s, None, None, C.OUT_DTYPE, "auto", True),
                    (a_q, a_s, w_q, w_s), q_bytes, flops, chk_q))

            def auto_quant(x, w_q, w_s):
                q, s, _ = torch.ops.torchquant.quantize_int8(x, True, True)
                return torch.ops.torchquant.int8_matmul(q, s, None, w_q, w_s, None, None, bf16, "auto")

            skip_aq = C.path_skip(ctx, "int8_matmul", "auto", M, why) or (
                "" if ctx.tq is None or C.has_kernel("quantize_int8", dev) else f"quantize_int8 has no {dev.type} kernel"
            )
            impls.append(
                C.Impl(
                    name="tq auto+quant",
                    kind="torchquant",
                    fn=auto_quant,
                    make_inputs=C.rotating((x, w_q, w_s)),
                    nbytes=C.nbytes(x, w_q, w_s) + M * N * 2,
                    flops=flops,
                    check=chk_q,
                    skip=skip_aq or None,
                    note="activation quantization inside the timed region",
                )
            )
            lazies: List[C.Lazy] = [ref_q, ref_int]
            impls.append(C.bf16_peer(x, w, flops, lazies))
            int_mm_skip = ""
            if ctx.on_gpu and M <= 16:
                int_mm_skip = "torch._int_mm needs M > 16"
            elif ctx.on_gpu and (K % 8 or N % 8):
                int_mm_skip = "torch._int_mm needs K, N multiples of 8"
            impls.append(
                C.Impl(
                    name="torch._int_mm",
                    kind="peer",
                    fn=lambda a_q, w_q: torch._int_mm(a_q, w_q.t()),
                    make_inputs=C.rotating((a_q, w_q)),
                    nbytes=C.nbytes(a_q, w_q) + M * N * 4,
                    flops=flops,
                    check=chk_int,
                    peer_key="int_mm",
                    skip=int_mm_skip or None,
                    note="int32 out, no scaling",
                )
            )

            def int_mm_scaled(a_q, a_s, w_q, w_s):
                acc = torch._int_mm(a_q, w_q.t())
                return (acc * a_s[:, None] * w_s[None, :]).to(bf16)

            impls.append(
                C.Impl(
                    name="torch._int_mm+scale",
                    kind="peer",
                    fn=int_mm_scaled,
                    make_inputs=C.rotating((a_q, a_s, w_q, w_s)),
                    nbytes=q_bytes,
                    flops=flops,
                    check=chk_q,
                    peer_key="int_mm+scale",
                    series="int8 torch._int_mm+scale",
                    skip=int_mm_skip or None,
                )
            )
            yield C.Case(shape, M, impls, cleanup=lazies)
            del x, a_q, a_s, impls
        del w, w_q, w_s
        if dev.type == "cuda":
            torch.cuda.empty_cache()


def main(argv=None) -> int:
    return C.bench_main(OP, make_cases, argv)


if __name__ == "__main__":
    sys.exit(main())
