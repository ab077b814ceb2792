"""FP8 E4M3 weights with fp32 scales per block of `block_size` along K.

w[n, k] = float(w_q[n, k]) * scale[n, k // block_size]. Quantize:
scale = block_amax / 448 (an all-zero block gets 1), then
w_q = e4m3(clamp(w / scale, -448, 448)). The clamp comes before the cast
because torch's e4m3 cast does not saturate: |x| >= 480 would become NaN.
A ragged last block (K not a multiple of block_size) is scaled by the amax
of the elements it has.
"""

from typing import Tuple

import torch

from torchquant.formats._common import check_2d_float, check_finite

E4M3_MAX = 448.0


def _check_block_size(block_size: int, op: str) -> None:
    if not (16 <= block_size <= 256 and block_size % 16 == 0):
        raise ValueError(f"{op}: block_size must be a multiple of 16 in [16, 256], got {block_size}")


def quantize_fp8_block(w: torch.Tensor, block_size: int = 128) -> Tuple[torch.Tensor, torch.Tensor]:
    _check_block_size(block_size, "quantize_fp8_block")
    check_2d_float(w, "quantize_fp8_block")
    check_finite(w, "quantize_fp8_block", "w")
    N, K = w.shape
    nb = (K + block_size - 1) // block_size
    wf = w.float()
    padded = torch.nn.functional.pad(wf, (0, nb * block_size - K))  # zeros leave amax alone
    amax = padded.view(N, nb, block_size).abs().amax(dim=2)
    scale = amax / E4M3_MAX
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))  # zero block, or underflow
    full = scale.repeat_interleave(block_size, dim=1)[:, :K]
    w_q = torch.clamp(wf / full, -E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    return w_q, scale


def dequantize_fp8_block(w_q: torch.Tensor, scale: torch.Tensor, block_size: int = 128, out_dtype=torch.float32) -> torch.Tensor:
    _check_block_size(block_size, "dequantize_fp8_block")
    K = w_q.shape[1]
    # Products are formed in float64 when that is asked for (the references),
    # otherwise in fp32 like the kernels: a 4-bit e4m3 significand times a
    # 24-bit scale needs 28 bits, more than fp32 holds.
    work = torch.float64 if out_dtype == torch.float64 else torch.float32
    full = scale.to(work).repeat_interleave(block_size, dim=1)[:, :K]
    return (w_q.to(work) * full).to(out_dtype)
