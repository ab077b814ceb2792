"""INT8: symmetric per-channel weights, per-token activations, optional zero point.

Quantize (symmetric): s = amax / 127 (a scale of 0, from amax == 0 or an
amax so tiny the division underflows, is replaced by 1),
q = clamp(rne(x / s), -128, 127). The clamp matters: a value that rounds to
128 would wrap to -128.

Asymmetric: the range [min(x, 0), max(x, 0)] spreads over all 256 codes,
s = span / 255 (hi / 255 - lo / 255 where span overflows fp32, finite ends
beyond its max / 2; 0 -> 1 as above), zero = clamp(rne(-128 - lo / s), -128, 127),
q = clamp(rne(x / s + zero), -128, 127), and x ~= s * (q - zero). Including
0 in the range keeps 0 exactly representable (the padding value of every
kernel) and costs nothing on a post-ReLU tensor, whose minimum is 0 anyway.

All arithmetic is fp32, in the order written, so the C++ ops (CPU and CUDA)
give bit-identical codes.
"""

from typing import Tuple

import torch

from torchquant.formats._common import check_2d_float, check_finite


def quantize_int8(x: torch.Tensor, per_row: bool = True, symmetric: bool = True) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    check_2d_float(x, "quantize_int8", "x")
    check_finite(x, "quantize_int8", "x")
    xf = x.float()
    dims = {"dim": 1, "keepdim": True} if per_row else {}
    if symmetric:
        amax = xf.abs().amax(**dims) if per_row else xf.abs().amax()
        s = amax / 127.0
        s = torch.where(s > 0, s, torch.ones_like(s))  # amax == 0, or a scale that underflows
        q = torch.clamp(torch.round(xf / s), -128, 127).to(torch.int8)
        zero = torch.zeros_like(s, dtype=torch.int32)
    else:
        lo = torch.clamp(xf.amin(**dims) if per_row else xf.amin(), max=0.0)
        hi = torch.clamp(xf.amax(**dims) if per_row else xf.amax(), min=0.0)
        span = hi - lo
        # hi - lo overflows only for finite ends past fp32's max / 2: then hi / 255 - lo / 255
        s = torch.where(torch.isinf(span), hi / 255.0 - lo / 255.0, span / 255.0)
        s = torch.where(s > 0, s, torch.ones_like(s))
        zf = torch.clamp(torch.round(-128.0 - lo / s), -128, 127)
        q = torch.clamp(torch.round(xf / s + zf), -128, 127).to(torch.int8)
        zero = zf.to(torch.int32)
    if per_row:
        s, zero = s.reshape(-1), zero.reshape(-1)
    return q, s.to(torch.float32), zero


def dequantize_int8(q: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor = None) -> torch.Tensor:
    """float32 s * (q - zero), scale/zero per row ([R]) or scalar."""
    qf = q.to(torch.float32)
    if zero is not None:
        qf = qf - (zero.reshape(-1, 1) if zero.dim() == 1 else zero).to(torch.float32)
    return qf * (scale.reshape(-1, 1) if scale.dim() == 1 else scale)


def int8_colsum(w_q: torch.Tensor) -> torch.Tensor:
    """colsum[n] = sum_k w_q[n, k] in int32: the zero-point correction term."""
    return w_q.to(torch.int32).sum(dim=1, dtype=torch.int32)
