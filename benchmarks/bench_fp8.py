"""fp8_block_gemv (E4M3 weight, fp32 scale per 128 along K, bf16 activation)
against bf16 and cuBLAS's FP8 GEMM.

Rows per (shape, M):
  tq auto           torch.ops.torchquant.fp8_block_gemv(x, w_q, w_scale, 128, kernel="auto")
  tq fma / tq mma   the forced paths ("fma" is the scalar decode path: timed for M <= --forced-max-m)
  tq auto static    M <= 16, GPU only: tq auto with static_weight=True (on sm_90 the GEMV issues its
                    first weight loads before its PDL wait; the weights here are never rewritten)
  tq prefill dequant  M > 16: dequantize_fp8_block to bf16 + F.linear, QuantLinear's default
                    prefill path (W8A16 numerics)
  tq prefill w8a8   M > 16: quantize_fp8_act (e4m3, 1 x 128 blocks, in the timed region) +
                    torch._scaled_mm with blockwise scales, QuantLinear's prefill="w8a8"
                    path (Hopper); checked against float64 over the quantized activation
  peers:
  bf16 F.linear     the unquantized layer
  _scaled_mm fp8    torch._scaled_mm, FP8 rowwise: E4M3 weight with one fp32 scale per
                    output channel, E4M3 activation with one scale per token, bf16 out.
                    cuBLAS wants M a multiple of 16: the activation is zero-padded to
                    ceil(M / 16) * 16 rows (padded rows are computed and count as bytes),
                    and quantized OUTSIDE the timed region (torchquant reads bf16 x directly,
                    so this favours the peer).

Correctness, every timed row: torchquant against float64 over the dequantized
weight, gated by the fp32-accumulation bound; peers with a relative sanity gate
against float64 over their own operands.
"""

from __future__ import annotations

import os
import sys
from typing import Iterable, List, Tuple

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common as C  # noqa: E402
from shapes import Shape  # noqa: E402

OP = "fp8"
BLOCK = 128
FORCED = ("fma", "mma")
E4M3_MAX = 448.0


def fp8_rowwise(t: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """(E4M3 [R, C], fp32 scale [R]) per row: scale = amax / 448, clamp before the cast."""
    s = t.float().abs().amax(1).clamp_min(1e-12) / E4M3_MAX
    q = (t.float() / s[:, None]).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    return q, s


def tq_call(x, w_q, w_s, path: str):
    return torch.ops.torchquant.fp8_block_gemv(x, w_q, w_s, BLOCK, None, path)


def tq_static(x, w_q, w_s):
    return torch.ops.torchquant.fp8_block_gemv(x, w_q, w_s, BLOCK, None, "auto", True)


def prefill_dequant(x, w_q, w_s):
    return torch.nn.functional.linear(x, torch.ops.torchquant.dequantize_fp8_block(w_q, w_s, BLOCK, x.dtype))


def prefill_w8a8(x, w_q, w_s):
    # What QuantLinear(prefill="w8a8") runs at M > 16 on Hopper.
    x_q, x_s = torch.ops.torchquant.quantize_fp8_act(x, BLOCK)
    return torch._scaled_mm(x_q, w_q.t(), scale_a=x_s, scale_b=w_s.t().contiguous(), out_dtype=x.dtype)


def prefill_wgmma(x, w_q, w_s):
    # What QuantLinear runs at M > 64 on sm_90: the dequantizing wgmma GEMM (same weight values
    # as prefill_dequant, converted in registers).
    return torch.ops.torchquant._fp8_block_gemm_sm90a(x, w_q, w_s, BLOCK, None)


def prefill_impls(ctx: C.Ctx, x, w_q, w_s, why: str, flops: float, lazies: List[C.Lazy]) -> List[C.Impl]:
    """QuantLinear's prefill paths (M > 16 only)."""
    M, K = x.shape
    if M <= 16:
        return []
    N = w_s.shape[0] if w_s is not None else 0
    out: List[C.Impl] = []
    for name, fn in (("tq prefill dequant", prefill_dequant), ("tq prefill wgmma", prefill_wgmma),
                     ("tq prefill w8a8", prefill_w8a8)):
        skip = why
        if not skip and name.endswith("wgmma"):
            if not (ctx.on_gpu and torch.cuda.get_device_capability(ctx.device) == (9, 0)
                    and hasattr(torch.ops.torchquant, "_fp8_block_gemm_sm90a")):
                skip = "dequantizing wgmma GEMM: sm_90 with torchquant._C_sm90a only"
        if not skip and name.endswith("w8a8"):
            if not ctx.on_gpu or torch.cuda.get_device_capability(ctx.device)[0] != 9:
                skip = "blockwise torch._scaled_mm: Hopper only"
            elif K % BLOCK or N % 16:
                skip = "needs K % 128 == 0 and N % 16 == 0"
        if skip:
            out.append(C.Impl(name=name, kind="torchquant", fn=fn, make_inputs=C.rotating((x, w_q, w_s)),
                              nbytes=0, flops=flops, check=None, skip=skip))
            continue
        if name.endswith("w8a8"):
            def ref(x=x, w_q=w_q, w_s=w_s):
                x_q, x_s = torch.ops.torchquant.quantize_fp8_act(x, BLOCK)
                xh = C.deq_fp8_block(x_q, x_s.contiguous(), BLOCK)
                return C.linear64_rows(xh, lambda a, b: C.deq_fp8_block(w_q[a:b], w_s[a:b], BLOCK), N)
        else:
            def ref(x=x, w_q=w_q, w_s=w_s):
                return C.linear64_rows(x, lambda a, b: C.deq_fp8_block(w_q[a:b], w_s[a:b], BLOCK), N)
        chk, lz = C.rel_check(ref)
        lazies.append(lz)
        out.append(C.Impl(name=name, kind="torchquant", fn=fn, make_inputs=C.rotating((x, w_q, w_s)),
                          nbytes=C.nbytes(x, w_q, w_s) + M * N * 2, flops=flops, check=chk,
                          series=f"fp8-block {name[3:]}"))
    return out


def make_cases(ctx: C.Ctx, shape_list: List[Shape], ms: Tuple[int, ...]) -> Iterable[C.Case]:
    dev = ctx.device
    bf16 = C.OUT_DTYPE
    for shape, w, gen in C.shape_weights(ctx, shape_list, 2000):
        N, K = shape.N, shape.K
        q, why = C.try_quantize(ctx, "quantize_fp8_block", w, BLOCK)
        w_q, w_s = q if q is not None else (None, None)
        def deq_rows(n0, n1, w_q=w_q, w_s=w_s):
            return C.deq_fp8_block(w_q[n0:n1], w_s[n0:n1], BLOCK)

        w8, s_w = fp8_rowwise(w)
        for M in ms:
            x = torch.randn(M, K, device=dev, dtype=bf16, generator=gen)
            flops = 2.0 * M * N * K
            impls: List[C.Impl] = []
            lazies: List[C.Lazy] = []
            chk_tq, lz = C.float_check(x, deq_rows, N, bf16)
            lazies.append(lz)
            tq_bytes = C.nbytes(x, w_q, w_s) + M * N * 2 if w_q is not None else 0
            impls += C.path_impls(ctx, "fp8_block_gemv", M, why, FORCED, tq_call, (x, w_q, w_s), tq_bytes, flops,
                                  chk_tq, "fp8-block torchquant")
            if M <= 16:  # the GEMV range, where static_weight acts
                impls.append(C.static_impl(ctx, "fp8_block_gemv", M, why, tq_static, (x, w_q, w_s), tq_bytes,
                                           flops, chk_tq))
            impls += prefill_impls(ctx, x, w_q, w_s, why, flops, lazies)
            impls.append(C.bf16_peer(x, w, flops, lazies))
            # FP8 rowwise peer: activation padded to a multiple of 16 rows, quantized here (untimed).
            Mp = (M + 15) // 16 * 16
            xp = torch.zeros(Mp, K, device=dev, dtype=bf16)
            xp[:M] = x
            a8, s_a = fp8_rowwise(xp)
            s_a = s_a.reshape(Mp, 1).contiguous()
            s_w_row = s_w.reshape(1, N).contiguous()
            chk_sm, lz = C.rel_check(
                lambda a8=a8, s_a=s_a, w8=w8, s_w=s_w: C.linear64_rows(
                    a8.to(torch.float64) * s_a.double(),
                    lambda a, b: w8[a:b].to(torch.float64) * s_w[a:b, None].double(),
                    N,
                )[:M],
                rows=M,
            )
            lazies.append(lz)
            sm_skip = ""
            if ctx.on_gpu and torch.cuda.get_device_capability(dev) < (8, 9):
                sm_skip = "FP8 _scaled_mm needs sm_89+"
            impls.append(
                C.Impl(
                    name="_scaled_mm fp8 rowwise",
                    kind="peer",
                    fn=lambda a8, w8, s_a, s_w_row: torch._scaled_mm(
                        a8, w8.t(), scale_a=s_a, scale_b=s_w_row, out_dtype=bf16
                    ),
                    make_inputs=C.rotating((a8, w8, s_a, s_w_row)),
                    nbytes=C.nbytes(a8, w8, s_a, s_w_row) + Mp * N * 2,
                    flops=flops,
                    check=chk_sm,
                    peer_key="scaled_mm",
                    series="fp8 rowwise torch._scaled_mm",
                    skip=sm_skip or None,
                    note=f"M padded to {Mp}; activation quantized outside timing" if Mp != M else "activation quantized outside timing",
                )
            )
            yield C.Case(shape, M, impls, cleanup=lazies)
            del x, xp, a8, s_a, impls
        del w, w_q, w_s, w8, s_w
        if dev.type == "cuda":
            torch.cuda.empty_cache()


def main(argv=None) -> int:
    return C.bench_main(OP, make_cases, argv)


if __name__ == "__main__":
    sys.exit(main())
