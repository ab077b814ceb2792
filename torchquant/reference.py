"""Float64 references of every op, and the error bounds tests gate on.

Two kinds of check, as ../shared/design/formats.md sets out:

1. Against the ORIGINAL float operands (`linear_ref`): the quantization
   error. Its deterministic bound (`quantization_bound`) is derived from the
   per-element rounding errors |e_a| <= s_a/2, |e_w| <= s_w/2: one product is
   off by at most |a| s_w/2 + |w| s_a/2 + s_a s_w/4; summed over K, times a
   slack of 4 for summation order. `statistical_bound` is its sqrt(K)
   counterpart, reported beside it and never gated on.
2. Against float64 over the DEQUANTIZED operands (`*_ref`): only the
   kernel's own arithmetic may differ. int8 accumulations are exact integers;
   float kernels accumulate in fp32, bounded by `fp32_accum_bound`.

Everything here is plain torch in float64 and runs on any device.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from torchquant.formats.fp8 import dequantize_fp8_block
from torchquant.formats.nvfp4 import dequantize_nvfp4

GATE_SLACK = 4.0

# Unit roundoff (half an ulp at 1) of each output type, and the absolute
# error of rounding into its subnormal range (half the smallest subnormal).
_UNIT = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8, torch.float64: 2.0**-53}
_SUBNORMAL_HALF = {torch.float32: 2.0**-150, torch.float16: 2.0**-25, torch.bfloat16: 2.0**-134, torch.float64: 0.0}


def _rowcol(v: Tensor, rows: int) -> Tensor:
    """A per-row vector or one element, as a float64 column [rows, 1] or scalar."""
    v = v.to(torch.float64)
    return v.reshape(-1, 1) if v.numel() > 1 else v.reshape(())


def _rowvec(v: Tensor) -> Tensor:
    """A per-column vector or one element, as a float64 row [1, N] or scalar."""
    v = v.to(torch.float64)
    return v.reshape(1, -1) if v.numel() > 1 else v.reshape(())


def linear_ref(x: Tensor, w: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """float64 x @ w^T + bias over whatever (original) operands are given."""
    y = x.to(torch.float64) @ w.to(torch.float64).T
    if bias is not None:
        y = y + bias.to(torch.float64)
    return y


# -------------------------------------------------------------------- int8 --
def int8_acc_ref(a_q: Tensor, w_q: Tensor) -> Tensor:
    """Exact integer acc[m, n] = sum_k a_q[m, k] * w_q[n, k] in int64."""
    # float64 holds every partial sum exactly (|acc| <= 65536 * 128 * 128 < 2^53).
    return (a_q.to(torch.float64) @ w_q.to(torch.float64).T).to(torch.int64)


def int8_matmul_ref(
    a_q: Tensor,
    a_scale: Tensor,
    a_zero: Optional[Tensor],
    w_q: Tensor,
    w_scale: Tensor,
    w_colsum: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
) -> Tensor:
    """float64 s_a * s_w * (acc - z_a * colsum) + bias."""
    M, N = a_q.shape[0], w_q.shape[0]
    acc = int8_acc_ref(a_q, w_q).to(torch.float64)
    if a_zero is not None:
        colsum = w_q.to(torch.int64).sum(1) if w_colsum is None else w_colsum.to(torch.int64)
        acc = acc - _rowcol(a_zero, M) * colsum.to(torch.float64).reshape(1, N)
    sw = _rowvec(w_scale)
    y = acc * _rowcol(a_scale, M) * sw
    if bias is not None:
        y = y + bias.to(torch.float64)
    return y


def int8_epilogue_bound(ref: Tensor, bias: Optional[Tensor], out_dtype: torch.dtype) -> Tensor:
    """Bound on |kernel - int8_matmul_ref| for the fp32 epilogue.

    float(acc) (1 rounding), s_a * s_w (1), the product (1), + bias (1): at most
    4 fp32 roundings relative to the magnitudes involved, then the rounding
    to out_dtype.
    """
    u32 = _UNIT[torch.float32]
    mag = ref.abs() + (bias.to(torch.float64).abs() if bias is not None else 0.0)
    core = 4.0 * u32 / (1.0 - 4.0 * u32) * mag
    u = _UNIT[out_dtype]
    return core * (1 + u) + u * ref.abs() + _SUBNORMAL_HALF[out_dtype]


# --------------------------------------------------------------- fp8/nvfp4 --
def dequantize_fp8_block_ref(w_q: Tensor, scale: Tensor, block_size: int) -> Tensor:
    return dequantize_fp8_block(w_q, scale.to(torch.float64), block_size, torch.float64)


def dequantize_nvfp4_ref(w_packed: Tensor, scale: Tensor, global_scale: Tensor) -> Tensor:
    return dequantize_nvfp4(w_packed, scale, global_scale.to(torch.float64), torch.float64)


def fp8_block_gemv_ref(x: Tensor, w_q: Tensor, w_scale: Tensor, block_size: int, bias: Optional[Tensor] = None) -> Tensor:
    return linear_ref(x, dequantize_fp8_block_ref(w_q, w_scale, block_size), bias)


def nvfp4_gemv_ref(x: Tensor, w_packed: Tensor, w_scale: Tensor, global_scale: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    # float64(e2m1 * bs) * float64(global): the same value the fp32 epilogue rounds.
    return linear_ref(x, dequantize_nvfp4_ref(w_packed, w_scale, global_scale), bias)


def fp32_accum_bound(x: Tensor, w_deq: Tensor, bias: Optional[Tensor] = None, out_dtype: torch.dtype = torch.float32, extra_ops: int = 3) -> Tensor:
    """Per-element bound on |kernel - float64 reference| for fp32 accumulation.

    A sum of n products accumulated in floating point in ANY order is within
    gamma_n * sum |x_k w_k| of the exact sum, gamma_n = n u / (1 - n u). u is
    taken as 2^-23, a full ulp, so a truncating accumulator (tensor cores'
    fp32 adders) is covered too. n = K + extra_ops counts the scale
    multiplications and the bias addition after the dot product. The result
    is then rounded once to out_dtype. Products of fp16/bf16 activations and
    decoded weights are exact in fp32, so they add no term.
    """
    K = x.shape[-1]
    u = 2.0**-23
    n = K + extra_ops
    gamma = n * u / (1.0 - n * u)
    s = x.to(torch.float64).abs() @ w_deq.to(torch.float64).abs().T
    if bias is not None:
        s = s + bias.to(torch.float64).abs()
    ref = linear_ref(x, w_deq, bias)
    uo = _UNIT[out_dtype]
    return gamma * s * (1 + uo) + uo * ref.abs() + _SUBNORMAL_HALF[out_dtype]


# ---------------------------------------------------------- quantization --
def quantization_bound(
    a: Tensor, w: Tensor, s_a: Tensor, s_w: Tensor, slack: float = GATE_SLACK
) -> Tensor:
    """Deterministic per-element bound [M, N] on |quantized result - linear_ref(a, w)|.

    s_a per row [M] or scalar, s_w per output channel [N] or scalar.
    sum_k (|a| s_w/2 + |w| s_a/2 + s_a s_w/4), times `slack`.
    """
    M, K = a.shape
    N = w.shape[0]
    sa = _rowcol(s_a, M)
    sw = _rowvec(s_w)
    abs_a = a.to(torch.float64).abs().sum(1, keepdim=True)  # [M, 1]
    abs_w = w.to(torch.float64).abs().sum(1).reshape(1, N)  # [1, N]
    return slack * (abs_a * sw / 2 + abs_w * sa / 2 + K * sa * sw / 4)


def statistical_bound(a: Tensor, w: Tensor, s_a: Tensor, s_w: Tensor, slack: float = GATE_SLACK) -> Tensor:
    """The sqrt(K) counterpart of quantization_bound: a diagnostic, never a gate.

    Independent zero-mean errors grow like sqrt(K) times one term's worst
    case; the worst term uses the largest |a| of the row and |w| of the column.
    """
    M, K = a.shape
    N = w.shape[0]
    sa = _rowcol(s_a, M)
    sw = _rowvec(s_w)
    amax = a.to(torch.float64).abs().amax(1, keepdim=True)
    wmax = w.to(torch.float64).abs().amax(1).reshape(1, N)
    return slack * K**0.5 * (amax * sw / 2 + wmax * sa / 2 + sa * sw / 4)


def worst_fraction(got: Tensor, ref: Tensor, bound: Tensor) -> float:
    """max |got - ref| / bound; inf if anything is non-finite (NaN never passes)."""
    g = got.detach().to(torch.float64)
    if not bool(torch.isfinite(g).all()):
        return float("inf")
    return float(((g - ref.detach().to(torch.float64)).abs() / bound.detach()).max())
