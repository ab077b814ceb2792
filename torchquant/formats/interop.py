"""Load tensors quantized by other tools into torchquant's formats.

- ModelOpt NVFP4: `weight` (uint8 [N, K/2], low nibble first), `weight_scale`
  (e4m3 [N, K/16]), `weight_scale_2` (fp32, the global dequant scale): the
  same layout as ours, the global scale taken as is.
- compressed-tensors NVFP4: `weight_packed`, `weight_scale`,
  `weight_global_scale`; the last is the RECIPROCAL (448 * 6 / amax), so it
  is inverted on load.
- DeepSeek-style FP8 with 128x128 weight blocks: scales [ceil(N/128),
  ceil(K/128)]; ours are per row and per K block, so each block-row scale is
  repeated over its 128 rows (block_size = 128).
- ModelOpt FP8 (`weight` e4m3 [N, K], `weight_scale` one fp32 value, [N] per channel, or
  [ceil(N/128), 1, ceil(K/128), 1] per 128 x 128 block) and
  compressed-tensors FP8 (`weight`, `weight_scale` of the tensor strategy: one
  value; channel: [N, 1]; block: [ceil(N/128), ceil(K/128)]): every such scale
  is a dequantization multiplier constant over whole fp8_block blocks, so it is
  written into ours ([N, ceil(K/bs)]) by repetition and the dequantized weight
  is the same bit for bit. A static `input_scale` (the W8A8 schemes') has no
  use here: fp8_block runs 16-bit activations.
- compressed-tensors INT8 W8A8 (`weight` int8 [N, K], symmetric, `weight_scale` of the channel
  strategy [N, 1] or the tensor strategy, one value): our int8 format is the same weight with a
  per-channel scale [N] (QuantLinear.from_int8); a nonzero `weight_zero_point` (asymmetric
  weights) has no counterpart and is refused.
"""

from typing import Optional, Tuple

import torch


def _check_nvfp4(packed: torch.Tensor, scale: torch.Tensor, src: str) -> None:
    # float4_e2m1fn_x2 (ModelOpt's newer exports) is the same bytes under another dtype name,
    # one byte per pair of codes: checked as the uint8 it is.
    fp4x2 = getattr(torch, "float4_e2m1fn_x2", None)
    dt = torch.uint8 if fp4x2 is not None and packed.dtype == fp4x2 else packed.dtype
    if dt != torch.uint8 or packed.dim() != 2:
        if packed.dtype == torch.int32:
            raise TypeError(f"{src}: an int32 packed weight is compressed-tensors' pack-quantized format "
                            "(int4 / int8 weight-only), not NVFP4; it is not supported")
        raise TypeError(f"{src}: packed weight must be uint8 [N, K/2], got {packed.dtype} {tuple(packed.shape)}")
    N, Kh = packed.shape
    if (2 * Kh) % 16:
        raise ValueError(f"{src}: K = {2 * Kh} (2 x the packed width) is not a multiple of 16; NVFP4 here needs "
                         "whole 16-element scale blocks")
    if scale.dtype != torch.float8_e4m3fn or tuple(scale.shape) != (N, 2 * Kh // 16):
        raise ValueError(
            f"{src}: weight scale must be float8_e4m3fn [N, K/16] = [{N}, {2 * Kh // 16}] (linear, not swizzled), "
            f"got {scale.dtype} {tuple(scale.shape)}"
        )


def _as_uint8(packed: torch.Tensor) -> torch.Tensor:
    return packed if packed.dtype == torch.uint8 else packed.view(torch.uint8)


def _global_scale(t: torch.Tensor, src: str, name: str) -> torch.Tensor:
    """A one-value global scale as fp32 0-dim; it comes from amax, so it is finite and positive."""
    if t.numel() != 1:
        raise ValueError(f"{src}: {name} must hold one value, got shape {tuple(t.shape)}")
    g = t.detach().to(torch.float32).reshape(())
    if not bool(torch.isfinite(g)) or float(g) <= 0.0:
        raise ValueError(f"{src}: {name} must be finite and positive, got {float(g)}")
    return g


def nvfp4_from_modelopt(weight: torch.Tensor, weight_scale: torch.Tensor, weight_scale_2: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    _check_nvfp4(weight, weight_scale, "nvfp4_from_modelopt")
    g = _global_scale(weight_scale_2, "nvfp4_from_modelopt", "weight_scale_2")
    return _as_uint8(weight).contiguous(), weight_scale.contiguous(), g


def nvfp4_from_compressed_tensors(weight_packed: torch.Tensor, weight_scale: torch.Tensor, weight_global_scale: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    _check_nvfp4(weight_packed, weight_scale, "nvfp4_from_compressed_tensors")
    inv = _global_scale(weight_global_scale, "nvfp4_from_compressed_tensors", "weight_global_scale")
    return _as_uint8(weight_packed).contiguous(), weight_scale.contiguous(), (1.0 / inv).to(torch.float32)


def nvfp4_to_compressed_tensors(w_packed: torch.Tensor, scale: torch.Tensor, global_scale: torch.Tensor):
    """Our NVFP4 triple as compressed-tensors names it (reciprocal global scale)."""
    return {
        "weight_packed": w_packed,
        "weight_scale": scale,
        "weight_global_scale": (1.0 / global_scale.to(torch.float32)).reshape(1),
    }


def fp8_scales_from_128x128(scale_inv: torch.Tensor, n: int, k: int) -> torch.Tensor:
    """DeepSeek 128x128 block scales [ceil(N/128), ceil(K/128)] -> ours [N, ceil(K/128)]."""
    nb_n, nb_k = (n + 127) // 128, (k + 127) // 128
    if scale_inv.dim() != 2 or tuple(scale_inv.shape) != (nb_n, nb_k):
        raise ValueError(f"fp8_scales_from_128x128: expected scales of shape ({nb_n}, {nb_k}) for a [{n}, {k}] weight, got {tuple(scale_inv.shape)}")
    return scale_inv.to(torch.float32).repeat_interleave(128, dim=0)[:n].contiguous()


def as_channel_scale(scale: torch.Tensor, n: int) -> torch.Tensor:
    """A per-tensor (one value) or per-channel ([n, 1] or [n]) scale as [n] (a view or an
    expansion, dtype kept); any other shape is returned as it is, for the caller to refuse."""
    if scale.numel() == 1:
        return scale.reshape(1).expand(n)
    if tuple(scale.shape) in ((n, 1), (n,)):
        return scale.reshape(n)
    return scale


def _fp8_weight(weight: torch.Tensor, src: str) -> torch.Tensor:
    if weight.dim() != 2 or weight.dtype != torch.float8_e4m3fn:
        hint = " (if these are e4m3 bytes, pass weight.view(torch.float8_e4m3fn))" if weight.dtype in (torch.uint8, torch.int8) else ""
        raise TypeError(f"{src}: weight must be float8_e4m3fn [N, K], got {weight.dtype} {tuple(weight.shape)}{hint}")
    return weight.contiguous()


def fp8_scales_to_blocks(weight_scale: torch.Tensor, n: int, k: int, block_size: int = 128) -> torch.Tensor:
    """A checkpoint's FP8 dequantization scale -> ours, fp32 [N, ceil(K / block_size)]: one value
    (per tensor), [N, 1] or [N] (per channel), or [ceil(N/128), ceil(K/128)] (128 x 128 blocks;
    needs block_size 128; ModelOpt's [ceil(N/128), 1, ceil(K/128), 1] too). Repetition only: the
    dequantized weight is unchanged."""
    if not weight_scale.is_floating_point() or weight_scale.dtype.itemsize < 2:
        raise TypeError(f"fp8_scales_to_blocks: weight_scale must be a float tensor, got {weight_scale.dtype}")
    if block_size % 16 or not 16 <= block_size <= 256:
        raise ValueError(f"fp8_scales_to_blocks: block_size must be a multiple of 16 in [16, 256], got {block_size}")
    s = weight_scale.detach().to(torch.float32)  # fp16 / bf16 scales widen exactly
    if s.dim() == 4 and s.shape[1] == 1 and s.shape[3] == 1:
        s = s.reshape(s.shape[0], s.shape[2])  # ModelOpt FP8_PB_WO's 128 x 128 block scales
    nb = (k + block_size - 1) // block_size
    ch = as_channel_scale(s, n)
    if tuple(ch.shape) == (n,):
        out = ch.reshape(n, 1).expand(n, nb)
    elif s.dim() == 2 and tuple(s.shape) == ((n + 127) // 128, (k + 127) // 128):
        if block_size != 128:
            raise ValueError("fp8_scales_to_blocks: 128 x 128 block scales need block_size 128, "
                             f"got {block_size}")
        return fp8_scales_from_128x128(s, n, k)
    else:
        raise ValueError(
            f"fp8_scales_to_blocks: for a [{n}, {k}] weight the scale must hold one value, [{n}, 1] or "
            f"[{(n + 127) // 128}, {(k + 127) // 128}] (128 x 128 blocks), got {tuple(s.shape)}")
    if not bool(torch.isfinite(out).all()):
        raise ValueError("fp8_scales_to_blocks: weight_scale holds NaN or Inf")
    return out.contiguous()


def fp8_from_modelopt(weight: torch.Tensor, weight_scale: torch.Tensor, block_size: int = 128) -> Tuple[torch.Tensor, torch.Tensor]:
    """ModelOpt FP8 (`weight`, `weight_scale` per tensor (FP8), per channel [N] (FP8_PC_PT) or per
    128 x 128 block [ceil(N/128), 1, ceil(K/128), 1] (FP8_PB_WO)) -> (w_q, scale) for fp8_block /
    QuantLinear.from_fp8_block(w_q, scale, block_size)."""
    w = _fp8_weight(weight, "fp8_from_modelopt")
    return w, fp8_scales_to_blocks(weight_scale, w.shape[0], w.shape[1], block_size)


def fp8_from_compressed_tensors(weight: torch.Tensor, weight_scale: torch.Tensor, block_size: int = 128) -> Tuple[torch.Tensor, torch.Tensor]:
    """compressed-tensors FP8 (`weight`, `weight_scale` of the tensor, channel or 128 x 128 block
    strategy) -> (w_q, scale) for fp8_block / QuantLinear.from_fp8_block(w_q, scale, block_size)."""
    w = _fp8_weight(weight, "fp8_from_compressed_tensors")
    return w, fp8_scales_to_blocks(weight_scale, w.shape[0], w.shape[1], block_size)


def int8_from_compressed_tensors(weight: torch.Tensor, weight_scale: torch.Tensor,
                                 weight_zero_point: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    """compressed-tensors INT8 (`weight`, `weight_scale` per channel [N, 1] or per tensor, an all-zero
    or absent `weight_zero_point`) -> (w_q int8 [N, K], scale fp32 [N]) for QuantLinear.from_int8."""
    if weight.dim() != 2 or weight.dtype != torch.int8:
        raise TypeError(f"int8_from_compressed_tensors: weight must be int8 [N, K], got {weight.dtype} {tuple(weight.shape)}")
    if weight_zero_point is not None and bool((weight_zero_point != 0).any()):
        raise ValueError("int8_from_compressed_tensors: a nonzero weight_zero_point (asymmetric weights) is not "
                         "supported; torchquant's int8 weights are symmetric")
    n = weight.shape[0]
    if not weight_scale.is_floating_point():
        raise TypeError(f"int8_from_compressed_tensors: weight_scale must be a float tensor, got {weight_scale.dtype}")
    s = as_channel_scale(weight_scale.detach().to(torch.float32), n)
    if tuple(s.shape) != (n,):
        raise ValueError(f"int8_from_compressed_tensors: weight_scale must hold one value or be [{n}, 1] "
                         f"(group strategies have no counterpart), got {tuple(s.shape)}")
    return weight.contiguous(), s.contiguous()
