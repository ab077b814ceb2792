"""Typed Python wrappers over torch.ops.torchquant.*, and their fake kernels.

Every op has a `register_fake` here, so torch.compile, export and meta-device
tracing know each output's shape and dtype without running a kernel. The
fakes check what can be checked from metadata alone (ranks, shapes, dtypes)
with torch._check and the same wording as the C++ validators.
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor

_ops = torch.ops.torchquant

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
HALF_DTYPES = (torch.float16, torch.bfloat16)


# ----------------------------------------------------------------- wrappers --
def int8_matmul(
    a_q: Tensor,
    a_scale: Tensor,
    a_zero: Optional[Tensor],
    w_q: Tensor,
    w_scale: Tensor,
    w_colsum: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    out_dtype: Optional[torch.dtype] = None,
    path: str = "auto",
) -> Tensor:
    """y = a_scale * w_scale * (a_q @ w_q^T - a_zero * w_colsum) + bias (int32-exact core)."""
    return _ops.int8_matmul(a_q, a_scale, a_zero, w_q, w_scale, w_colsum, bias, out_dtype, path)


def quantize_int8(x: Tensor, per_row: bool = True, symmetric: bool = True) -> Tuple[Tensor, Tensor, Tensor]:
    """(q int8, scale fp32, zero_point int32) per row or per tensor."""
    return _ops.quantize_int8(x, per_row, symmetric)


def fp8_block_gemv(
    x: Tensor,
    w_q: Tensor,
    w_scale: Tensor,
    block_size: int = 128,
    bias: Optional[Tensor] = None,
    path: str = "auto",
    static_weight: bool = False,
) -> Tensor:
    """y = x @ (w_q * w_scale per K block)^T + bias, in x's dtype.

    static_weight: promise that w_q and w_scale were not written by a kernel that may still be
    running when this one launches (weights loaded once, as in inference). On sm_90 the GEMV
    then starts copying them before the previous kernel on the stream has finished (PDL,
    csrc/common/pdl.h). Passing it for a weight just written on the stream can read stale
    values; it changes nothing else (same results), and nothing on the CPU."""
    return _ops.fp8_block_gemv(x, w_q, w_scale, block_size, bias, path, static_weight)


def quantize_fp8_block(w: Tensor, block_size: int = 128) -> Tuple[Tensor, Tensor]:
    return _ops.quantize_fp8_block(w, block_size)


def quantize_fp8_act(x: Tensor, block_size: int = 128) -> Tuple[Tensor, Tensor]:
    """Per-token fp8 activation quantization in 1 x block_size blocks (no host
    sync; a block with NaN/Inf gets a NaN scale). The scale is [M, nb] fp32
    stored column-major, as torch._scaled_mm's blockwise scaling takes it."""
    return _ops.quantize_fp8_act(x, block_size)


def dequantize_fp8_block(
    w_q: Tensor, scale: Tensor, block_size: int = 128, out_dtype: Optional[torch.dtype] = None
) -> Tensor:
    return _ops.dequantize_fp8_block(w_q, scale, block_size, out_dtype)


def nvfp4_gemv(
    x: Tensor,
    w_packed: Tensor,
    w_scale: Tensor,
    global_scale: Tensor,
    bias: Optional[Tensor] = None,
    path: str = "auto",
    layout: int = 0,
    static_weight: bool = False,
) -> Tensor:
    """y = x @ (e2m1 * block_scale * global_scale)^T + bias, in x's dtype.

    layout: 0 for the formats.md packing; 1 / 2 for a weight from nvfp4_relayout(w_packed, 1 / 2),
    the bf16 / fp16 decode order (x of that dtype only; on CUDA the paths mma and wgmma: auto
    keeps its choice of wgmma and takes mma where it would choose fma or tile).
    static_weight: as fp8_block_gemv's, for w_packed and w_scale."""
    return _ops.nvfp4_gemv(x, w_packed, w_scale, global_scale, bias, path, layout, static_weight)


def nvfp4_relayout(w_packed: Tensor, layout: int, inverse: bool = False) -> Tensor:
    """The packed nvfp4 weight in word layout `layout` (or, with inverse, from it back to the
    formats.md packing): a bit permutation inside every 4-byte word of a row, exact both ways."""
    return _ops.nvfp4_relayout(w_packed, layout, inverse)


def quantize_nvfp4(w: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    return _ops.quantize_nvfp4(w)


def dequantize_nvfp4(
    w_packed: Tensor, scale: Tensor, global_scale: Tensor, out_dtype: Optional[torch.dtype] = None
) -> Tensor:
    return _ops.dequantize_nvfp4(w_packed, scale, global_scale, out_dtype)


def prune24(w: Tensor) -> Tuple[Tensor, Tensor]:
    return _ops.prune24(w)


def compress24(w: Tensor) -> Tuple[Tensor, Tensor]:
    return _ops.compress24(w)


def decompress24(values: Tensor, meta: Tensor) -> Tensor:
    return _ops.decompress24(values, meta)


# -------------------------------------------------------------------- fakes --
def _check_2d(t: Tensor, op: str, name: str) -> None:
    torch._check(t.dim() == 2, lambda: f"{op}: {name} must be 2-D, got shape {tuple(t.shape)}")


def _check_dtype(t: Tensor, dtypes, op: str, name: str) -> None:
    if not isinstance(dtypes, tuple):
        dtypes = (dtypes,)
    torch._check(t.dtype in dtypes, lambda: f"{op}: {name} must be one of {dtypes}, got {t.dtype}")


def _check_bias(bias: Optional[Tensor], n, op: str, dtype=None) -> None:
    if bias is None:
        return
    torch._check(bias.dim() == 1 and bias.shape[0] == n, lambda: f"{op}: bias must be 1-D of length N = {n}")
    if dtype is not None:
        torch._check(bias.dtype == dtype, lambda: f"{op}: bias dtype {bias.dtype} must match x dtype {dtype}")


def _int8_epilogue_out(a_q, a_scale, a_zero, w_scale, bias, out_dtype, M, N, op: str) -> Tensor:
    """The int8 epilogue's operand checks (int8_matmul, sparse24_int8_matmul) and the [M, N] output."""
    _check_dtype(a_scale, torch.float32, op, "a_scale")
    _check_dtype(w_scale, torch.float32, op, "w_scale")
    if a_zero is not None:
        _check_dtype(a_zero, torch.int32, op, "a_zero")
    _check_bias(bias, N, op)
    od = torch.float32 if out_dtype is None else out_dtype
    torch._check(od in FLOAT_DTYPES, lambda: f"{op}: out_dtype must be float32, float16 or bfloat16")
    return a_q.new_empty((M, N), dtype=od)


@torch.library.register_fake("torchquant::int8_matmul")
def _int8_matmul_fake(a_q, a_scale, a_zero, w_q, w_scale, w_colsum=None, bias=None, out_dtype=None, path="auto"):
    op = "int8_matmul"
    _check_2d(a_q, op, "a_q")
    _check_2d(w_q, op, "w_q")
    _check_dtype(a_q, torch.int8, op, "a_q")
    _check_dtype(w_q, torch.int8, op, "w_q")
    M, K = a_q.shape
    N = w_q.shape[0]
    torch._check(w_q.shape[1] == K, lambda: f"{op}: a_q and w_q K differ")
    torch._check(K <= 65536, lambda: f"{op}: K = {K} exceeds 65536")
    return _int8_epilogue_out(a_q, a_scale, a_zero, w_scale, bias, out_dtype, M, N, op)


def _register_sm90a_fakes() -> None:
    # Every schema below is declared by csrc/sm90a_module.cpp; a stale module built before
    # one of them existed simply lacks that op (nothing to register).
    def has(name: str) -> bool:
        return hasattr(torch.ops.torchquant, name)

    torch.library.register_fake("torchquant::_int8_gemm_sm90a")(
        lambda a_q, a_scale, a_zero, w_q, w_scale, w_colsum=None, bias=None, out_dtype=None: _int8_matmul_fake(
            a_q, a_scale, a_zero, w_q, w_scale, w_colsum, bias, out_dtype
        )
    )
    torch.library.register_fake("torchquant::_sparse24_int8_gemm_sm90a")(
        lambda a_q, a_scale, a_zero, w_values, w_meta, w_scale, w_colsum=None, bias=None, out_dtype=None: (
            _sparse24_int8_matmul_fake(a_q, a_scale, a_zero, w_values, w_meta, w_scale, w_colsum, bias, out_dtype)
        )
    )
    torch.library.register_fake("torchquant::_sparse24_gemm_sm90a")(
        lambda x, values, meta, bias=None: _sparse24_gemv_fake(x, values, meta, bias)
    )
    if has("_nvfp4_gemm_sm90a"):
        torch.library.register_fake("torchquant::_nvfp4_gemm_sm90a")(
            lambda x, w_packed, w_scale, global_scale, bias=None, layout=0: _nvfp4_gemv_fake(
                x, w_packed, w_scale, global_scale, bias, "auto", layout)
        )
    if has("_fp8_block_gemm_sm90a"):
        torch.library.register_fake("torchquant::_fp8_block_gemm_sm90a")(
            lambda x, w_q, w_scale, block_size=128, bias=None: _fp8_block_gemv_fake(x, w_q, w_scale, block_size, bias)
        )
    if has("_nvfp4_gemv_sm90a"):
        torch.library.register_fake("torchquant::_nvfp4_gemv_sm90a")(
            lambda x, w_packed, w_scale, global_scale, bias=None, layout=0, static_weight=False: _nvfp4_gemv_fake(
                x, w_packed, w_scale, global_scale, bias, "wgmma", layout)
        )
    if has("_fp8_block_gemv_sm90a"):
        torch.library.register_fake("torchquant::_fp8_block_gemv_sm90a")(
            lambda x, w_q, w_scale, block_size=128, bias=None, static_weight=False: _fp8_block_gemv_fake(
                x, w_q, w_scale, block_size, bias)
        )


@torch.library.register_fake("torchquant::quantize_int8")
def _quantize_int8_fake(x, per_row=True, symmetric=True):
    op = "quantize_int8"
    _check_2d(x, op, "x")
    _check_dtype(x, FLOAT_DTYPES, op, "x")
    shape = (x.shape[0],) if per_row else ()
    return (
        x.new_empty(x.shape, dtype=torch.int8),
        x.new_empty(shape, dtype=torch.float32),
        x.new_empty(shape, dtype=torch.int32),
    )


def _check_block_size(block_size: int, op: str) -> None:
    torch._check(
        16 <= block_size <= 256 and block_size % 16 == 0,
        lambda: f"{op}: block_size must be a multiple of 16 in [16, 256], got {block_size}",
    )


@torch.library.register_fake("torchquant::fp8_block_gemv")
def _fp8_block_gemv_fake(x, w_q, w_scale, block_size=128, bias=None, path="auto", static_weight=False):
    op = "fp8_block_gemv"
    _check_block_size(block_size, op)
    _check_2d(x, op, "x")
    _check_2d(w_q, op, "w_q")
    _check_2d(w_scale, op, "w_scale")
    _check_dtype(x, HALF_DTYPES, op, "x")
    _check_dtype(w_q, torch.float8_e4m3fn, op, "w_q")
    _check_dtype(w_scale, torch.float32, op, "w_scale")
    M, K = x.shape
    N = w_q.shape[0]
    torch._check(w_q.shape[1] == K, lambda: f"{op}: x and w_q K differ")
    torch._check(K % 16 == 0, lambda: f"{op}: K must be a multiple of 16, got {K}")
    _check_bias(bias, N, op, x.dtype)
    return x.new_empty((M, N))


def _fp8_rows_fake(t, block_size, op, name, scale_by_block):
    """quantize_fp8_block / quantize_fp8_act: e4m3 codes [R, K] and fp32 scales
    [R, nb], row-major or (scale_by_block) column-major, like the kernels."""
    _check_block_size(block_size, op)
    _check_2d(t, op, name)
    _check_dtype(t, FLOAT_DTYPES, op, name)
    R, K = t.shape
    nb = (K + block_size - 1) // block_size
    f32 = torch.float32
    scale = t.new_empty((nb, R), dtype=f32).t() if scale_by_block else t.new_empty((R, nb), dtype=f32)
    return t.new_empty((R, K), dtype=torch.float8_e4m3fn), scale


@torch.library.register_fake("torchquant::quantize_fp8_block")
def _quantize_fp8_block_fake(w, block_size=128):
    return _fp8_rows_fake(w, block_size, "quantize_fp8_block", "w", False)


@torch.library.register_fake("torchquant::quantize_fp8_act")
def _quantize_fp8_act_fake(x, block_size=128):
    return _fp8_rows_fake(x, block_size, "quantize_fp8_act", "x", True)


@torch.library.register_fake("torchquant::dequantize_fp8_block")
def _dequantize_fp8_block_fake(w_q, scale, block_size=128, out_dtype=None):
    op = "dequantize_fp8_block"
    _check_block_size(block_size, op)
    _check_2d(w_q, op, "w_q")
    _check_dtype(w_q, torch.float8_e4m3fn, op, "w_q")
    _check_dtype(scale, torch.float32, op, "scale")
    return w_q.new_empty(w_q.shape, dtype=torch.float32 if out_dtype is None else out_dtype)


@torch.library.register_fake("torchquant::nvfp4_gemv")
def _nvfp4_gemv_fake(x, w_packed, w_scale, global_scale, bias=None, path="auto", layout=0, static_weight=False):
    op = "nvfp4_gemv"
    torch._check(layout in (0, 1, 2), lambda: f"{op}: layout must be 0, 1 or 2, got {layout}")
    torch._check(
        layout == 0 or x.dtype == (torch.bfloat16 if layout == 1 else torch.float16),
        lambda: f"{op}: layout {layout} is the {'bf16' if layout == 1 else 'fp16'} decode order, got x {x.dtype}",
    )
    _check_2d(x, op, "x")
    _check_2d(w_packed, op, "w_packed")
    _check_2d(w_scale, op, "w_scale")
    _check_dtype(x, HALF_DTYPES, op, "x")
    _check_dtype(w_packed, torch.uint8, op, "w_packed")
    _check_dtype(w_scale, torch.float8_e4m3fn, op, "w_scale")
    _check_dtype(global_scale, torch.float32, op, "global_scale")
    M, K = x.shape
    N = w_packed.shape[0]
    torch._check(K % 16 == 0, lambda: f"{op}: K must be a multiple of 16, got {K}")
    torch._check(w_packed.shape[1] * 2 == K, lambda: f"{op}: w_packed must be [N, K/2]")
    _check_bias(bias, N, op, x.dtype)
    return x.new_empty((M, N))


@torch.library.register_fake("torchquant::nvfp4_relayout")
def _nvfp4_relayout_fake(w_packed, layout, inverse=False):
    op = "nvfp4_relayout"
    torch._check(layout in (0, 1, 2), lambda: f"{op}: layout must be 0, 1 or 2, got {layout}")
    _check_2d(w_packed, op, "w_packed")
    _check_dtype(w_packed, torch.uint8, op, "w_packed")
    torch._check(w_packed.shape[1] % 8 == 0, lambda: f"{op}: K = 2 * w_packed.size(1) must be a multiple of 16")
    return torch.empty_like(w_packed, memory_format=torch.contiguous_format)


@torch.library.register_fake("torchquant::quantize_nvfp4")
def _quantize_nvfp4_fake(w):
    op = "quantize_nvfp4"
    _check_2d(w, op, "w")
    _check_dtype(w, FLOAT_DTYPES, op, "w")
    N, K = w.shape
    torch._check(K % 16 == 0, lambda: f"{op}: K must be a multiple of 16, got {K}")
    return (
        w.new_empty((N, K // 2), dtype=torch.uint8),
        w.new_empty((N, K // 16), dtype=torch.float8_e4m3fn),
        w.new_empty((), dtype=torch.float32),
    )


@torch.library.register_fake("torchquant::dequantize_nvfp4")
def _dequantize_nvfp4_fake(w_packed, scale, global_scale, out_dtype=None):
    op = "dequantize_nvfp4"
    _check_2d(w_packed, op, "w_packed")
    _check_dtype(w_packed, torch.uint8, op, "w_packed")
    _check_dtype(scale, torch.float8_e4m3fn, op, "scale")
    N, Kh = w_packed.shape
    return w_packed.new_empty((N, Kh * 2), dtype=torch.float32 if out_dtype is None else out_dtype)


_SPARSE_DTYPES = (torch.int8, torch.float16, torch.bfloat16, torch.float32)


@torch.library.register_fake("torchquant::prune24")
def _prune24_fake(w):
    op = "prune24"
    _check_2d(w, op, "w")
    _check_dtype(w, _SPARSE_DTYPES, op, "w")
    torch._check(w.shape[1] % 4 == 0, lambda: f"{op}: K must be a multiple of 4")
    return torch.empty_like(w), w.new_empty(w.shape, dtype=torch.bool)


@torch.library.register_fake("torchquant::compress24")
def _compress24_fake(w):
    op = "compress24"
    _check_2d(w, op, "w")
    _check_dtype(w, _SPARSE_DTYPES, op, "w")
    N, K = w.shape
    torch._check(K % 4 == 0, lambda: f"{op}: K must be a multiple of 4")
    return w.new_empty((N, K // 2)), w.new_empty((N, (K + 7) // 8), dtype=torch.uint8)


@torch.library.register_fake("torchquant::decompress24")
def _decompress24_fake(values, meta):
    op = "decompress24"
    _check_2d(values, op, "values")
    _check_dtype(values, _SPARSE_DTYPES, op, "values")
    _check_dtype(meta, torch.uint8, op, "meta")
    N, Kh = values.shape
    return values.new_empty((N, Kh * 2))


# ------------------------------------------------------------ 2:4 execution --
def sparse24_gemv(
    x: Tensor, values: Tensor, meta: Tensor, bias: Optional[Tensor] = None, path: str = "auto"
) -> Tensor:
    """y = x @ decompress24(values, meta)^T + bias, reading only the compressed weight; x's dtype."""
    return _ops.sparse24_gemv(x, values, meta, bias, path)


@torch.library.register_fake("torchquant::sparse24_gemv")
def _sparse24_gemv_fake(x, values, meta, bias=None, path="auto"):
    op = "sparse24_gemv"
    _check_2d(x, op, "x")
    _check_2d(values, op, "values")
    _check_2d(meta, op, "meta")
    _check_dtype(x, HALF_DTYPES, op, "x")
    torch._check(values.dtype == x.dtype, lambda: f"{op}: values dtype {values.dtype} must match x dtype {x.dtype}")
    _check_dtype(meta, torch.uint8, op, "meta")
    M, K = x.shape
    N = values.shape[0]
    torch._check(K % 4 == 0, lambda: f"{op}: K must be a multiple of 4 (2:4 groups), got {K}")
    torch._check(values.shape[1] * 2 == K, lambda: f"{op}: values must be [N, K/2] = [N, {K // 2}]")
    torch._check(meta.shape[0] == N and meta.shape[1] == (K + 7) // 8, lambda: f"{op}: meta must be [N, ceil(K/8)]")
    _check_bias(bias, N, op, x.dtype)
    return x.new_empty((M, N))


def sparse24_int8_matmul(
    a_q: Tensor,
    a_scale: Tensor,
    a_zero: Optional[Tensor],
    w_values: Tensor,
    w_meta: Tensor,
    w_scale: Tensor,
    w_colsum: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    out_dtype: Optional[torch.dtype] = None,
    path: str = "auto",
) -> Tensor:
    """int8_matmul with the int8 weight in compress24's 2:4 form (values [N, K/2] + meta)."""
    return _ops.sparse24_int8_matmul(a_q, a_scale, a_zero, w_values, w_meta, w_scale, w_colsum, bias, out_dtype, path)


@torch.library.register_fake("torchquant::sparse24_int8_matmul")
def _sparse24_int8_matmul_fake(
    a_q, a_scale, a_zero, w_values, w_meta, w_scale, w_colsum=None, bias=None, out_dtype=None, path="auto"
):
    op = "sparse24_int8_matmul"
    _check_2d(a_q, op, "a_q")
    _check_2d(w_values, op, "w_values")
    _check_2d(w_meta, op, "w_meta")
    _check_dtype(a_q, torch.int8, op, "a_q")
    _check_dtype(w_values, torch.int8, op, "w_values")
    _check_dtype(w_meta, torch.uint8, op, "w_meta")
    M, K = a_q.shape
    N = w_values.shape[0]
    torch._check(K % 4 == 0, lambda: f"{op}: K must be a multiple of 4 (2:4 groups), got {K}")
    torch._check(K <= 65536, lambda: f"{op}: K = {K} exceeds 65536")
    torch._check(w_values.shape[1] * 2 == K, lambda: f"{op}: w_values must be [N, K/2] = [N, {K // 2}]")
    torch._check(
        w_meta.shape[0] == N and w_meta.shape[1] == (K + 7) // 8, lambda: f"{op}: w_meta must be [N, ceil(K/8)]"
    )
    return _int8_epilogue_out(a_q, a_scale, a_zero, w_scale, bias, out_dtype, M, N, op)
