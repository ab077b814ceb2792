"""Typed Python wrappers over torch.ops.torchquant.*, and their fake kernels.

Every op has a `register_fake` here (the private sm_90a ops too, where that module is
loaded), so torch.compile, export, meta-device tracing and FakeTensorMode know each
output's shape and dtype without running a kernel. A fake raises where the C++ op would
for every condition that metadata alone decides, in the C++ order and with its message
(RuntimeError, through torch._check, so symbolic sizes stay symbolic):

- arguments: a required tensor given None; ranks; dtypes (out_dtype of the GEMMs and the
  dequantizers: float32, float16 or bfloat16; bias: those three, and x's dtype for the
  GEMVs); contiguity (`is_contiguous()`, so transposed and stride-0 views are refused);
  emptiness (M, N, K > 0; quantize_fp8_act's M may be 0); shapes against each other
  (K, fp8 scales [N, ceil(K / block_size)], nvfp4 scales [N, K/16], 2:4 values [N, K/2]
  and meta [N, ceil(K/8)], activation scales / zero points of one element or [M], weight
  scales of one element or [N], w_colsum int32 [N], bias [N], global_scale one float32
  element); K multiples (16 for fp8 / nvfp4, 4 for 2:4); size limits (int8 K <= 65536,
  the 2:4 ops' 2^31 - 256); block_size (a multiple of 16 in [16, 256]); layout (0, 1, 2 or
  3, and 1 / 3 only with bfloat16 x, 2 only with float16 x).
- one device: every tensor argument on exactly the first operand's device, as in C++ (no
  exception for a one-element CPU tensor beside CUDA ones); the message names the argument.
- path names by the tensors' device type: "auto" and the names the op's CUDA code takes
  for CUDA tensors (FakeTensorMode keeps the device), "auto" and "cpu" for CPU ones, either
  backend's names on the meta device. For CUDA tensors also what the CUDA
  code refuses whatever the GPU: M / N of 2^31 - 256 and more, fp8 / nvfp4 K >= 2^26,
  a named path's shape conditions (int8 'wgmma': K % 16; fp8 'wgmma': block_size % 64,
  K % 128, fp8 'direct': block_size % 64, K % 64; nvfp4 'tile': K % 128, 'wgmma': K % 256; 2:4 'mma' / 'gemv': K % 32,
  'wgmma': K % 128), nvfp4 layouts 1 / 2 / 3 on paths other than auto / mma / wgmma (and
  'direct' for layout 3, K % 128; 'direct' with another layout); and for
  quantize_int8 per row, 2^31 rows. The sm_90a ops: CUDA tensors only, and their K
  multiples and TMA size bounds.

Not checked, as the fakes cannot know them: tensor values (NaN / Inf given to the
quantizers, compress24's at most 2 nonzeros per group, decompress24's meta nibbles), the
GPU's compute capability, whether torchquant._C_sm90a is loaded (a forced 'wgmma' path
without it), and launch limits that depend on the device (shared memory, grid sizes).
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor

_ops = torch.ops.torchquant

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
HALF_DTYPES = (torch.float16, torch.bfloat16)


# ----------------------------------------------------------------- wrappers --
def _tensor_arg(t, op: str, name: str) -> None:
    # An op whose only tensor argument is None never reaches its validator: the dispatcher
    # raises first, with its own wording ("There were no tensor arguments to this function").
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: {name} must be a tensor, got {type(t).__name__}")


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
    static_weight: bool = False,
) -> Tensor:
    """y = a_scale * w_scale * (a_q @ w_q^T - a_zero * w_colsum) + bias (int32-exact core).

    static_weight: as fp8_block_gemv's, for w_q: on sm_90 the gemv path (M <= 32) then issues its
    first round of weight loads before the previous kernel on the stream has finished."""
    return _ops.int8_matmul(a_q, a_scale, a_zero, w_q, w_scale, w_colsum, bias, out_dtype, path, static_weight)


def quantize_int8(x: Tensor, per_row: bool = True, symmetric: bool = True) -> Tuple[Tensor, Tensor, Tensor]:
    """(q int8, scale fp32, zero_point int32) per row or per tensor."""
    _tensor_arg(x, "quantize_int8", "x")
    return _ops.quantize_int8(x, per_row, symmetric)


def fp8_block_gemv(
    x: Tensor,
    w_q: Tensor,
    w_scale: Tensor,
    block_size: int = 128,
    bias: Optional[Tensor] = None,
    path: str = "auto",
    static_weight: bool = False,
    tiled: bool = False,
) -> Tensor:
    """y = x @ (w_q * w_scale per K block)^T + bias, in x's dtype.

    static_weight: promise that w_q and w_scale were not written by a kernel that may still be
    running when this one launches (weights loaded once, as in inference). On sm_90 the GEMV
    then starts copying them before the previous kernel on the stream has finished (PDL,
    csrc/common/pdl.h). Passing it for a weight just written on the stream can read stale
    values; it changes nothing else (same results), and nothing on the CPU.

    path: "auto", or on CUDA one of "fma", "mma", "tile", "wgmma" (sm_90 with _C_sm90a) and
    "direct" (sm_89+, block_size % 64 == 0, K % 64 == 0: docs/fp8_gemv.md "The direct GEMV").

    tiled: w_q and w_scale come from fp8_block_tile (N % 16 == 0, K % 64 == 0, block_size % 64 ==
    0). On CUDA paths "direct", "mma" (the ring kernel) and "wgmma" (sm_90) read them, at every M;
    auto takes the direct GEMV on narrow-DRAM cards such as the H100 at M <= 8 on grids of more
    than SMs 16-row blocks (at M = 9..16 in the row-major rule's window), the wgmma GEMV on
    wide-DRAM sm_90 cards (the H200) where the row-major rule takes it, else the ring kernel. The
    CPU untiles them first. Same results as the row-major operands on the same kernel."""
    return _ops.fp8_block_gemv(x, w_q, w_scale, block_size, bias, path, static_weight, tiled)


def fp8_block_tile(w_q: Tensor, w_scale: Tensor, inverse: bool = False) -> Tuple[Tensor, Tensor]:
    """quantize_fp8_block's (w_q, w_scale) stored per 16-row tile (csrc/fp8/fp8_tiles.h: the
    weight as [N/16][K/64][16][64] bytes, the scales as [N/16][nb][16]), for
    fp8_block_gemv(..., tiled=True); inverse=True undoes it. Same shapes and dtypes, exact both
    ways; N % 16 == 0 and K % 64 == 0."""
    _tensor_arg(w_q, "fp8_block_tile", "w_q")
    _tensor_arg(w_scale, "fp8_block_tile", "w_scale")
    return _ops.fp8_block_tile(w_q, w_scale, inverse)


def quantize_fp8_block(w: Tensor, block_size: int = 128) -> Tuple[Tensor, Tensor]:
    _tensor_arg(w, "quantize_fp8_block", "w")
    return _ops.quantize_fp8_block(w, block_size)


def quantize_fp8_act(x: Tensor, block_size: int = 128) -> Tuple[Tensor, Tensor]:
    """Per-token fp8 activation quantization in 1 x block_size blocks (no host
    sync; a block with NaN/Inf gets a NaN scale). The scale is [M, nb] fp32
    stored column-major, as torch._scaled_mm's blockwise scaling takes it."""
    _tensor_arg(x, "quantize_fp8_act", "x")
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
    keeps its choice of wgmma and takes mma where it would choose fma or tile); 3 for
    nvfp4_relayout(w_packed, 3), the bf16 decode order on adjacent codes (bf16 x; on CUDA the
    paths mma, wgmma and 'direct', the last sm_80+ with K % 128 == 0, which auto takes at
    M <= 8 on layers of SMs .. 3 x SMs blocks of 16 rows with K <= 4096: docs/nvfp4_gemv.md 27-29);
    4 for nvfp4_relayout(w_packed, 4) with w_scale from nvfp4_relayout_scale(w_scale, 4), layout 3
    with weight and scales stored per 16-row tile and 64-byte piece (bf16 x, N % 16 == 0, K % 128 ==
    0; on CUDA path 'direct', which auto takes at every M, and path 'mma', the ring GEMV's tiled
    form at M tiles of <= 8 rows: docs/nvfp4_gemv.md 40-41).
    static_weight: as fp8_block_gemv's, for w_packed and w_scale."""
    return _ops.nvfp4_gemv(x, w_packed, w_scale, global_scale, bias, path, layout, static_weight)


def nvfp4_relayout(w_packed: Tensor, layout: int, inverse: bool = False) -> Tensor:
    """The packed nvfp4 weight in word layout `layout` (or, with inverse, from it back to the
    formats.md packing): a bit permutation inside every 4-byte word of a row, exact both ways;
    layout 4 is layout 3's words with the rows' 64-byte pieces stored per 16-row tile (N % 16 ==
    0, K % 128 == 0; its scales from nvfp4_relayout_scale)."""
    _tensor_arg(w_packed, "nvfp4_relayout", "w_packed")
    return _ops.nvfp4_relayout(w_packed, layout, inverse)


def nvfp4_relayout_scale(w_scale: Tensor, layout: int, inverse: bool = False) -> Tensor:
    """The block scales (e4m3 [N, K/16]) for a weight in `layout`: a copy for layouts 0..3, whose
    scales are the formats.md ones; for layout 4 stored per 16-row tile and 64-byte piece of the
    weight ([N/16][K/128][16][8]; N % 16 == 0, K % 128 == 0), or back from there with inverse."""
    _tensor_arg(w_scale, "nvfp4_relayout_scale", "w_scale")
    return _ops.nvfp4_relayout_scale(w_scale, layout, inverse)


def quantize_nvfp4(w: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    _tensor_arg(w, "quantize_nvfp4", "w")
    return _ops.quantize_nvfp4(w)


def dequantize_nvfp4(
    w_packed: Tensor, scale: Tensor, global_scale: Tensor, out_dtype: Optional[torch.dtype] = None
) -> Tensor:
    return _ops.dequantize_nvfp4(w_packed, scale, global_scale, out_dtype)


def prune24(w: Tensor) -> Tuple[Tensor, Tensor]:
    _tensor_arg(w, "prune24", "w")
    return _ops.prune24(w)


def compress24(w: Tensor) -> Tuple[Tensor, Tensor]:
    _tensor_arg(w, "compress24", "w")
    return _ops.compress24(w)


def decompress24(values: Tensor, meta: Tensor) -> Tensor:
    return _ops.decompress24(values, meta)


# ------------------------------------------------------------ 2:4 execution --
def sparse24_gemv(
    x: Tensor, values: Tensor, meta: Tensor, bias: Optional[Tensor] = None, path: str = "auto"
) -> Tensor:
    """y = x @ decompress24(values, meta)^T + bias, reading only the compressed weight; x's dtype."""
    return _ops.sparse24_gemv(x, values, meta, bias, path)


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
    static_weight: bool = False,
) -> Tensor:
    """int8_matmul with the int8 weight in compress24's 2:4 form (values [N, K/2] + meta);
    static_weight as int8_matmul's (its gemv path, M <= 4)."""
    return _ops.sparse24_int8_matmul(a_q, a_scale, a_zero, w_values, w_meta, w_scale, w_colsum, bias, out_dtype, path,
                                     static_weight)


# -------------------------------------------------------------------- fakes --
# The C++ argument checks (csrc/common/checks.h, csrc/sparse/sparse24_checks.h and the op
# entry points in csrc/cpu/*.cpp, csrc/*/*.cu) in Python: the same conditions in the same
# order with the same words, through torch._check so symbolic sizes work (a backed size gets
# a guard, an unbacked one a runtime assert). Every condition reads metadata only.

# c10::ScalarType's names, as TORCH_CHECK prints a dtype.
_SCALAR_NAMES = {
    torch.uint8: "Byte", torch.int8: "Char", torch.int16: "Short", torch.int32: "Int", torch.int64: "Long",
    torch.float16: "Half", torch.float32: "Float", torch.float64: "Double", torch.bfloat16: "BFloat16",
    torch.bool: "Bool", torch.float8_e4m3fn: "Float8_e4m3fn", torch.float8_e5m2: "Float8_e5m2",
    torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble",
}
_FLOAT_WORDS = "float32, float16 or bfloat16"
_HALF_WORDS = "float16 or bfloat16"
_SPARSE_DTYPES = (torch.int8, torch.float16, torch.bfloat16, torch.float32)
_SPARSE_WORDS = "int8, float16, bfloat16 or float32"
_INT_MAX = 2**31 - 1
_INT8_MAX_K = 65536  # kInt8MaxK
_DIM_MAX = 2**31 - 256  # kMaxDim (common/checks.h) and tma::require_sm90a's M and N bound
# The path names besides "auto" that each op's CUDA implementation takes (check_kernel_name in
# csrc/*/*.cu); every CPU implementation takes "cpu".
_CUDA_PATHS = {
    "int8_matmul": ("gemv", "mma", "wgmma"),
    "fp8_block_gemv": ("fma", "mma", "tile", "wgmma", "direct"),
    "nvfp4_gemv": ("fma", "mma", "tile", "wgmma", "direct"),
    "sparse24_gemv": ("fma", "mma", "wgmma"),
    "sparse24_int8_matmul": ("simt", "gemv", "mma", "wgmma"),
}


def _dtype_name(dtype) -> str:
    return _SCALAR_NAMES.get(dtype, str(dtype).replace("torch.", ""))


def _shape(s) -> str:
    """shape_str: "[2, 3]"."""
    return "[" + ", ".join(str(v) for v in s) + "]"


def _check_all(conds, msg) -> None:
    """TORCH_CHECK(a && b && ...): each condition on its own (no bool() of a symbolic one), one message."""
    def message() -> str:  # torch 2.11's _check takes only a callable message
        return msg() if callable(msg) else msg

    for c in conds:
        torch._check(c, message)


def _check_defined(t: Optional[Tensor], op: str, name: str) -> None:
    torch._check(t is not None, lambda: f"{op}: {name} must be a tensor, got None")


def _check_dim(t: Tensor, dim: int, op: str, name: str) -> None:
    _check_defined(t, op, name)
    torch._check(t.dim() == dim, lambda: f"{op}: {name} must be {dim}-D, got shape {_shape(t.shape)}")


def _check_dtype(t: Tensor, dtype, op: str, name: str) -> None:
    _check_defined(t, op, name)
    torch._check(t.dtype == dtype, lambda: f"{op}: {name} must be {_dtype_name(dtype)}, got {_dtype_name(t.dtype)}")


def _check_dtype_in(t: Tensor, dtypes, words: str, op: str, name: str) -> None:
    torch._check(t.dtype in dtypes, lambda: f"{op}: {name} must be {words}, got {_dtype_name(t.dtype)}")


def _check_contiguous(t: Tensor, op: str, name: str) -> None:
    _check_defined(t, op, name)
    torch._check(
        t.is_contiguous(),
        lambda: f"{op}: {name} must be contiguous (call .contiguous() first), got strides {_shape(t.stride())}",
    )


def _check_same_device(ref: Tensor, t: Tensor, op: str, name: str) -> None:
    """Exactly ref's device, as check_same_device (no exception for CPU scalars)."""
    _check_defined(t, op, name)
    torch._check(
        t.device == ref.device, lambda: f"{op}: {name} is on {t.device} but the other operands are on {ref.device}"
    )


def _check_cuda(t: Tensor, op: str, what: str) -> None:
    torch._check(t.device.type == "cuda", lambda: f"{op}: {what}, got {t.device}")


def _check_rowvec(t: Tensor, rows, dtype, op: str, name: str) -> None:
    """check_rowvec: one element, or 1-D of length `rows`; `dtype`; contiguous."""
    _check_dtype(t, dtype, op, name)
    torch._check(
        (t.numel() == 1) | (t.dim() == 1 and t.shape[0] == rows),
        lambda: f"{op}: {name} must hold one element or be 1-D of length {rows}, got shape {_shape(t.shape)}",
    )
    _check_contiguous(t, op, name)


def _check_bias(bias: Optional[Tensor], ref: Tensor, n, op: str, match_ref: bool = False) -> None:
    """check_bias (and, with match_ref, the GEMVs' "bias dtype must match x dtype")."""
    if bias is None:
        return
    _check_same_device(ref, bias, op, "bias")
    _check_dtype_in(bias, FLOAT_DTYPES, _FLOAT_WORDS, op, "bias")
    torch._check(
        bias.dim() == 1 and bias.shape[0] == n,
        lambda: f"{op}: bias must be 1-D of length N = {n}, got shape {_shape(bias.shape)}",
    )
    _check_contiguous(bias, op, "bias")
    if match_ref:
        torch._check(
            bias.dtype == ref.dtype,
            lambda: f"{op}: bias dtype {_dtype_name(bias.dtype)} must match x dtype {_dtype_name(ref.dtype)}",
        )


def _check_nonempty(M, N, K, op: str) -> None:
    _check_all((M > 0, N > 0, K > 0), lambda: f"{op}: empty operand (M = {M}, N = {N}, K = {K})")


def _check_out_dtype(out_dtype, op: str):
    od = torch.float32 if out_dtype is None else out_dtype
    torch._check(od in FLOAT_DTYPES, lambda: f"{op}: out_dtype must be {_FLOAT_WORDS}, got {_dtype_name(od)}")
    return od


def _check_block_size(block_size: int, op: str) -> None:
    torch._check(
        16 <= block_size <= 256 and block_size % 16 == 0,
        lambda: f"{op}: block_size must be a multiple of 16 in [16, 256], got {block_size}",
    )


def _check_path(path: str, ref: Tensor, op: str) -> bool:
    """check_kernel_name for the backend of ref's device type: the CUDA names for CUDA tensors,
    the CPU's for CPU ones, either backend's on the meta device (a model traced on meta may be
    meant for either). Returns whether the CUDA backend's rules apply."""
    kind = ref.device.type
    cuda = kind == "cuda"
    if cuda:
        valid, backend = _CUDA_PATHS[op], "CUDA"
    elif kind == "meta":
        valid, backend = ("cpu",) + tuple(_CUDA_PATHS[op]), "CPU or CUDA"
    else:
        valid, backend = ("cpu",), "CPU"

    def msg() -> str:
        shown = path.replace("\0", "\\0")  # a NUL shown as \0, as the C++ does
        return f"{op}: path '{shown}' is not a {backend} path; valid here: 'auto'" + "".join(f" '{v}'" for v in valid)

    torch._check(path == "auto" or path in valid, msg)
    return cuda


def _check_tma(M, N, op: str) -> None:
    """tma::require_sm90a's size bound (its compute-capability check needs the device)."""
    _check_all(
        (M < _DIM_MAX, N < _DIM_MAX),
        lambda: f"{op}: M and N must fit the TMA's 32-bit coordinates, got M = {M}, N = {N}",
    )


# ----------------------------------------------------------------- int8 fakes --
def _validate_int8_epilogue(a_q, a_scale, a_zero, w_scale, w_colsum, bias, out_dtype, M, N, op: str):
    """check_int8_epilogue (int8_matmul, sparse24_int8_matmul); returns the output dtype."""
    _check_rowvec(a_scale, M, torch.float32, op, "a_scale")
    _check_rowvec(w_scale, N, torch.float32, op, "w_scale")
    if a_zero is not None:
        _check_same_device(a_q, a_zero, op, "a_zero")
        _check_rowvec(a_zero, M, torch.int32, op, "a_zero")
    if w_colsum is not None:
        _check_same_device(a_q, w_colsum, op, "w_colsum")
        _check_dtype(w_colsum, torch.int32, op, "w_colsum")
        torch._check(
            w_colsum.dim() == 1 and w_colsum.shape[0] == N,
            lambda: f"{op}: w_colsum must be 1-D of length N = {N}, got shape {_shape(w_colsum.shape)}",
        )
        _check_contiguous(w_colsum, op, "w_colsum")
    _check_bias(bias, a_q, N, op)
    return _check_out_dtype(out_dtype, op)


def _validate_int8_matmul(a_q, a_scale, a_zero, w_q, w_scale, w_colsum, bias, out_dtype):
    """validate_int8_matmul; returns (M, N, K, out dtype)."""
    op = "int8_matmul"
    _check_dim(a_q, 2, op, "a_q")
    _check_dim(w_q, 2, op, "w_q")
    _check_dtype(a_q, torch.int8, op, "a_q")
    _check_dtype(w_q, torch.int8, op, "w_q")
    _check_contiguous(a_q, op, "a_q")
    _check_contiguous(w_q, op, "w_q")
    M, K = a_q.shape
    N = w_q.shape[0]
    torch._check(
        w_q.shape[1] == K,
        lambda: f"{op}: a_q is [M, K] = {_shape(a_q.shape)} and w_q [N, K] = {_shape(w_q.shape)}: their K differ",
    )
    _check_nonempty(M, N, K, op)
    torch._check(
        K <= _INT8_MAX_K,
        lambda: f"{op}: K = {K} exceeds {_INT8_MAX_K}, beyond which the int32 accumulator can overflow",
    )
    for t, name in ((a_scale, "a_scale"), (w_q, "w_q"), (w_scale, "w_scale")):
        _check_same_device(a_q, t, op, name)
    od = _validate_int8_epilogue(a_q, a_scale, a_zero, w_scale, w_colsum, bias, out_dtype, M, N, op)
    return M, N, K, od


@torch.library.register_fake("torchquant::int8_matmul")
def _int8_matmul_fake(a_q, a_scale, a_zero, w_q, w_scale, w_colsum=None, bias=None, out_dtype=None, path="auto",
                      static_weight=False):
    op = "int8_matmul"
    M, N, K, od = _validate_int8_matmul(a_q, a_scale, a_zero, w_q, w_scale, w_colsum, bias, out_dtype)
    if _check_path(path, a_q, op):  # int8_matmul.cu
        _check_all((M <= _INT_MAX, N <= _INT_MAX), lambda: f"{op}: M and N must be below 2^31, got M = {M}, N = {N}")
        if path == "wgmma":
            torch._check(
                K % 16 == 0,
                lambda: f"{op}: kernel 'wgmma' needs K % 16 == 0 (TMA row strides), got K = {K}; use kernel 'mma'",
            )
            _check_tma(M, N, "_int8_gemm_sm90a")
    return a_q.new_empty((M, N), dtype=od)


def _int8_gemm_sm90a_fake(a_q, a_scale, a_zero, w_q, w_scale, w_colsum=None, bias=None, out_dtype=None):
    op = "_int8_gemm_sm90a"
    M, N, K, od = _validate_int8_matmul(a_q, a_scale, a_zero, w_q, w_scale, w_colsum, bias, out_dtype)
    _check_cuda(a_q, op, "operands must be CUDA tensors")
    torch._check(
        K % 16 == 0,
        lambda: f"{op}: K must be a multiple of 16 (the TMA copies need 16-byte row strides), got K = {K}; "
        "int8_matmul's 'mma' kernel takes any K",
    )
    _check_tma(M, N, op)
    return a_q.new_empty((M, N), dtype=od)


@torch.library.register_fake("torchquant::quantize_int8")
def _quantize_int8_fake(x, per_row=True, symmetric=True):
    op = "quantize_int8"
    _check_dim(x, 2, op, "x")
    _check_dtype_in(x, FLOAT_DTYPES, _FLOAT_WORDS, op, "x")
    _check_contiguous(x, op, "x")
    R, C = x.shape
    _check_all((R > 0, C > 0), lambda: f"{op}: x must be non-empty, got shape {_shape(x.shape)}")
    if x.device.type == "cuda" and per_row:
        torch._check(R <= _INT_MAX, lambda: f"{op}: at most 2^31 - 1 rows, got {R}")
    shape = (R,) if per_row else ()
    return (
        x.new_empty(x.shape, dtype=torch.int8),
        x.new_empty(shape, dtype=torch.float32),
        x.new_empty(shape, dtype=torch.int32),
    )


# ------------------------------------------------------------------ fp8 fakes --
def _validate_fp8_block_gemv(x, w_q, w_scale, block_size, bias, op="fp8_block_gemv"):
    """validate_fp8_block_gemv; returns (M, N, K)."""
    _check_block_size(block_size, op)
    _check_dim(x, 2, op, "x")
    _check_dim(w_q, 2, op, "w_q")
    _check_dim(w_scale, 2, op, "w_scale")
    _check_dtype_in(x, HALF_DTYPES, _HALF_WORDS, op, "x")
    _check_dtype(w_q, torch.float8_e4m3fn, op, "w_q")
    _check_dtype(w_scale, torch.float32, op, "w_scale")
    _check_contiguous(x, op, "x")
    _check_contiguous(w_q, op, "w_q")
    _check_contiguous(w_scale, op, "w_scale")
    _check_same_device(x, w_q, op, "w_q")
    _check_same_device(x, w_scale, op, "w_scale")
    M, K = x.shape
    N = w_q.shape[0]
    torch._check(
        w_q.shape[1] == K,
        lambda: f"{op}: x is [M, K] = {_shape(x.shape)} and w_q [N, K] = {_shape(w_q.shape)}: their K differ",
    )
    _check_nonempty(M, N, K, op)
    torch._check(K % 16 == 0, lambda: f"{op}: K must be a multiple of 16, got {K}")
    nb = (K + block_size - 1) // block_size
    _check_all(
        (w_scale.shape[0] == N, w_scale.shape[1] == nb),
        lambda: f"{op}: w_scale must be [N, ceil(K / {block_size})] = [{N}, {nb}], got {_shape(w_scale.shape)}",
    )
    _check_bias(bias, x, N, op, match_ref=True)
    return M, N, K


def _check_dq_path(x, M, N, K, op: str) -> None:
    """check_path of csrc/dqgemm/dq_gemm_sm90a.cu (the sm_90a fp8 / nvfp4 kernels)."""
    _check_cuda(x, op, "x must be a CUDA tensor")
    torch._check(K < 2**26, lambda: f"{op}: K = {K} must be below 2^26")
    _check_tma(M, N, op)


def _check_fp8_wgmma(x, block_size, M, N, K, op: str) -> None:
    """_fp8_block_gemv_sm90a's own preconditions: fp8_block_gemv's path 'wgmma'."""
    torch._check(
        block_size % 64 == 0,
        lambda: f"{op}: path 'wgmma' needs block_size % 64 == 0 (a scale block is whole 64-wide wgmma groups), "
        f"got {block_size}; path 'mma' takes every block size",
    )
    torch._check(
        K % 128 == 0,
        lambda: f"{op}: path 'wgmma' needs K % 128 == 0 (its stages are 128 wide), got K = {K}; "
        "path 'mma' takes K % 16 == 0",
    )
    _check_dq_path(x, M, N, K, op)


def _check_gemv_limits(M, N, K, op: str) -> None:
    """The CUDA GEMVs' size limits (fp8_block_gemv.cu, nvfp4_gemv.cu): M, N below kMaxDim, K below 2^26."""
    _check_all(
        (M < _DIM_MAX, N < _DIM_MAX),
        lambda: f"{op}: M and N must each be below 2^31 - 256, got M = {M}, N = {N}",
    )
    torch._check(K < 2**26, lambda: f"{op}: K = {K} must be below 2^26")


def _check_fp8_tiled_shape(N, K, op: str) -> None:
    """checks.h check_fp8_tiled_shape."""
    _check_all(
        (N % 16 == 0, K % 64 == 0),
        lambda: f"{op}: the tiled fp8 weight needs N % 16 == 0 and K % 64 == 0 (whole 16-row tiles of 64-byte "
        f"pieces), got N = {N}, K = {K}",
    )


@torch.library.register_fake("torchquant::fp8_block_gemv")
def _fp8_block_gemv_fake(x, w_q, w_scale, block_size=128, bias=None, path="auto", static_weight=False, tiled=False):
    op = "fp8_block_gemv"
    M, N, K = _validate_fp8_block_gemv(x, w_q, w_scale, block_size, bias, op)
    if not _check_path(path, x, op):  # fp8_cpu.cpp
        if tiled:
            _check_fp8_tiled_shape(N, K, op)
    else:  # fp8_block_gemv.cu
        _check_gemv_limits(M, N, K, op)
        if tiled:
            torch._check(
                path in ("auto", "direct", "mma", "wgmma"),
                lambda: f"{op}: a tiled weight (tiled=True) runs on paths 'direct', 'mma' and 'wgmma' only, got path "
                f"'{path}'; fp8_block_tile(w_q, w_scale, inverse=True) gives the row-major operands the other "
                "paths read",
            )
            _check_fp8_tiled_shape(N, K, op)
            torch._check(
                block_size % 64 == 0,
                lambda: f"{op}: a tiled weight needs block_size % 64 == 0 (whole 64-wide pieces of one scale "
                f"block), got block_size = {block_size}",
            )
            if path == "wgmma":
                _check_fp8_wgmma(x, block_size, M, N, K, op)
            return x.new_empty((M, N))
        if path == "wgmma":
            _check_fp8_wgmma(x, block_size, M, N, K, op)
        if path == "direct":
            torch._check(
                block_size % 64 == 0 and K % 64 == 0,
                lambda: f"{op}: path 'direct' needs block_size % 64 == 0 and K % 64 == 0 (whole 64-wide "
                f"pieces of one scale block), got block_size = {block_size}, K = {K}; path 'mma' takes both",
            )
    return x.new_empty((M, N))


def _fp8_block_gemm_sm90a_fake(x, w_q, w_scale, block_size=128, bias=None, tiled=False):
    op = "fp8_block_gemm"
    M, N, K = _validate_fp8_block_gemv(x, w_q, w_scale, block_size, bias, op)
    if tiled:
        _check_fp8_tiled_shape(N, K, op)
    _check_dq_path(x, M, N, K, op)
    return x.new_empty((M, N))


def _fp8_block_gemv_sm90a_fake(x, w_q, w_scale, block_size=128, bias=None, static_weight=False, tiled=False):
    op = "fp8_block_gemv"
    M, N, K = _validate_fp8_block_gemv(x, w_q, w_scale, block_size, bias, op)
    if tiled:
        _check_fp8_tiled_shape(N, K, op)
    _check_fp8_wgmma(x, block_size, M, N, K, op)
    return x.new_empty((M, N))


def _validate_weight_2d(w, op: str, k_multiple: int) -> None:
    """validate_weight_2d (quantize_fp8_block, quantize_nvfp4)."""
    _check_dim(w, 2, op, "w")
    _check_dtype_in(w, FLOAT_DTYPES, _FLOAT_WORDS, op, "w")
    _check_contiguous(w, op, "w")
    N, K = w.shape
    _check_all((N > 0, K > 0), lambda: f"{op}: w must be non-empty, got shape {_shape(w.shape)}")
    if k_multiple > 1:
        torch._check(K % k_multiple == 0, lambda: f"{op}: K = w.size(1) must be a multiple of {k_multiple}, got {K}")


def _fp8_rows_out(t, block_size, scale_by_block):
    """quantize_fp8_block / quantize_fp8_act: e4m3 codes [R, K] and fp32 scales
    [R, nb], row-major or (scale_by_block) column-major, like the kernels."""
    R, K = t.shape
    nb = (K + block_size - 1) // block_size
    f32 = torch.float32
    scale = t.new_empty((nb, R), dtype=f32).t() if scale_by_block else t.new_empty((R, nb), dtype=f32)
    return t.new_empty((R, K), dtype=torch.float8_e4m3fn), scale


def _check_fp8_weight_pair(w_q, scale, op: str, scale_name: str) -> None:
    """checks.h check_fp8_weight_pair: a stored fp8_block weight and its scales (shape: the caller's)."""
    _check_dim(w_q, 2, op, "w_q")
    _check_dim(scale, 2, op, scale_name)
    _check_dtype(w_q, torch.float8_e4m3fn, op, "w_q")
    _check_dtype(scale, torch.float32, op, scale_name)
    _check_contiguous(w_q, op, "w_q")
    _check_contiguous(scale, op, scale_name)
    _check_same_device(w_q, scale, op, scale_name)
    _check_all((w_q.shape[0] > 0, w_q.shape[1] > 0), lambda: f"{op}: w_q must be non-empty, got shape {_shape(w_q.shape)}")


@torch.library.register_fake("torchquant::fp8_block_tile")
def _fp8_block_tile_fake(w_q, w_scale, inverse=False):
    op = "fp8_block_tile"  # fp8_tiles.h validate_fp8_tile
    _check_fp8_weight_pair(w_q, w_scale, op, "w_scale")
    N, K = w_q.shape
    _check_all(
        (w_scale.shape[0] == N, w_scale.shape[1] >= 1),
        lambda: f"{op}: w_scale must be [N, nb] with N = {N} and nb >= 1 (quantize_fp8_block's scales), got "
        f"{_shape(w_scale.shape)}",
    )
    _check_fp8_tiled_shape(N, K, op)
    return (torch.empty_like(w_q, memory_format=torch.contiguous_format),
            torch.empty_like(w_scale, memory_format=torch.contiguous_format))


@torch.library.register_fake("torchquant::quantize_fp8_block")
def _quantize_fp8_block_fake(w, block_size=128):
    op = "quantize_fp8_block"
    _check_block_size(block_size, op)
    _validate_weight_2d(w, op, 1)
    return _fp8_rows_out(w, block_size, False)


@torch.library.register_fake("torchquant::quantize_fp8_act")
def _quantize_fp8_act_fake(x, block_size=128):
    op = "quantize_fp8_act"  # validate_quantize_fp8_act: M may be 0, K may not
    _check_block_size(block_size, op)
    _check_dim(x, 2, op, "x")
    _check_dtype_in(x, FLOAT_DTYPES, _FLOAT_WORDS, op, "x")
    _check_contiguous(x, op, "x")
    torch._check(x.shape[1] > 0, lambda: f"{op}: x must have K > 0, got shape {_shape(x.shape)}")
    return _fp8_rows_out(x, block_size, True)


@torch.library.register_fake("torchquant::dequantize_fp8_block")
def _dequantize_fp8_block_fake(w_q, scale, block_size=128, out_dtype=None):
    op = "dequantize_fp8_block"
    _check_block_size(block_size, op)
    _check_fp8_weight_pair(w_q, scale, op, "scale")
    N, K = w_q.shape
    nb = (K + block_size - 1) // block_size
    _check_all(
        (scale.shape[0] == N, scale.shape[1] == nb),
        lambda: f"{op}: scale must be [N, ceil(K / {block_size})] = [{N}, {nb}], got {_shape(scale.shape)}",
    )
    od = _check_out_dtype(out_dtype, op)
    return w_q.new_empty((N, K), dtype=od)


# ---------------------------------------------------------------- nvfp4 fakes --
def _check_global_scale(global_scale, op: str) -> None:
    """nvfp4's fp32 global scale: one element."""
    _check_dtype(global_scale, torch.float32, op, "global_scale")
    torch._check(
        global_scale.numel() == 1,
        lambda: f"{op}: global_scale must hold one element, got shape {_shape(global_scale.shape)}",
    )


def _validate_nvfp4_gemv(x, w_packed, w_scale, global_scale, bias, op="nvfp4_gemv"):
    """validate_nvfp4_gemv; returns (M, N, K)."""
    _check_dim(x, 2, op, "x")
    _check_dim(w_packed, 2, op, "w_packed")
    _check_dim(w_scale, 2, op, "w_scale")
    _check_dtype_in(x, HALF_DTYPES, _HALF_WORDS, op, "x")
    _check_dtype(w_packed, torch.uint8, op, "w_packed")
    _check_dtype(w_scale, torch.float8_e4m3fn, op, "w_scale")
    _check_global_scale(global_scale, op)
    _check_contiguous(x, op, "x")
    _check_contiguous(w_packed, op, "w_packed")
    _check_contiguous(w_scale, op, "w_scale")
    _check_same_device(x, w_packed, op, "w_packed")
    _check_same_device(x, w_scale, op, "w_scale")
    _check_same_device(x, global_scale, op, "global_scale")
    M, K = x.shape
    N = w_packed.shape[0]
    torch._check(K % 16 == 0, lambda: f"{op}: K must be a multiple of 16, got {K}")
    torch._check(
        w_packed.shape[1] * 2 == K,
        lambda: f"{op}: x is [M, K] = {_shape(x.shape)} so w_packed must be [N, K/2] = [N, {K // 2}], "
        f"got {_shape(w_packed.shape)}",
    )
    _check_nonempty(M, N, K, op)
    _check_all(
        (w_scale.shape[0] == N, w_scale.shape[1] == K // 16),
        lambda: f"{op}: w_scale must be [N, K/16] = [{N}, {K // 16}], got {_shape(w_scale.shape)}",
    )
    _check_bias(bias, x, N, op, match_ref=True)
    return M, N, K


def _check_nvfp4_layout_value(layout: int, op: str, tiled_ok: bool = False) -> None:
    torch._check(
        layout in (0, 1, 2, 3) or (tiled_ok and layout == 4),
        lambda: f"{op}: layout must be 0 (formats.md packing), 1 (the bf16 decode order), 2 (the fp16 "
        f"decode order) or 3 (the bf16 decode order on adjacent codes)"
        + (", or 4 (layout 3 tiled)" if tiled_ok else " (layout 4, tiled, is nvfp4_gemv's alone)")
        + f", got {layout}",
    )


def _check_nvfp4_tiled_shape(N: int, K: int, op: str) -> None:
    """checks.h check_nvfp4_tiled_shape."""
    torch._check(
        N % 16 == 0 and K % 128 == 0,
        lambda: f"{op}: layout 4 (tiles of 16 rows x 128 codes) needs N % 16 == 0 and K % 128 == 0, got N = {N}, "
        f"K = {K}; use layout 3 for other shapes",
    )


def _check_nvfp4_layout(layout: int, x_dtype, op: str, tiled_ok: bool = False) -> None:
    """checks.h check_nvfp4_layout: layouts 1, 3 and 4 with bf16 x, 2 with fp16."""
    _check_nvfp4_layout_value(layout, op, tiled_ok)
    if layout == 0:
        return
    bf16 = layout in (1, 3, 4)
    torch._check(
        x_dtype == (torch.bfloat16 if bf16 else torch.float16),
        lambda: f"{op}: layout {layout} is the {'bf16' if bf16 else 'fp16'} decode order and needs "
        f"{'bfloat16' if bf16 else 'float16'} x, got {_dtype_name(x_dtype)}; give other x the layout-0 weight "
        f"(nvfp4_relayout(w_packed, {layout}, inverse=True))",
    )


def _check_nvfp4_wgmma(x, M, N, K, op: str) -> None:
    """_nvfp4_gemv_sm90a's own preconditions: nvfp4_gemv's path 'wgmma'."""
    torch._check(
        K % 256 == 0,
        lambda: f"{op}: path 'wgmma' needs K % 256 == 0 (its stages are 256 wide and each row's block scales "
        f"one TMA row of K / 16 bytes, a multiple of 16), got K = {K}; path 'mma' takes K % 16 == 0",
    )
    _check_dq_path(x, M, N, K, op)


@torch.library.register_fake("torchquant::nvfp4_gemv")
def _nvfp4_gemv_fake(x, w_packed, w_scale, global_scale, bias=None, path="auto", layout=0, static_weight=False):
    op = "nvfp4_gemv"
    M, N, K = _validate_nvfp4_gemv(x, w_packed, w_scale, global_scale, bias, op)
    _check_nvfp4_layout(layout, x.dtype, op, tiled_ok=True)
    if not _check_path(path, x, op):  # nvfp4_cpu.cpp
        if layout == 4:
            _check_nvfp4_tiled_shape(N, K, op)
    else:  # nvfp4_gemv.cu
        _check_gemv_limits(M, N, K, op)
        if layout == 4:
            torch._check(
                path in ("auto", "direct", "mma"),
                lambda: f"{op}: layout 4 (tiled) runs on paths 'direct' and 'mma' only (auto takes 'direct'), got "
                f"path '{path}'; nvfp4_relayout(w_packed, 4, inverse=True) and nvfp4_relayout_scale(w_scale, 4, "
                "inverse=True) give the layout-0 operands the other paths read",
            )
            _check_nvfp4_tiled_shape(N, K, op)
            return x.new_empty((M, N))
        if path == "direct":
            torch._check(
                layout == 3,
                lambda: f"{op}: path 'direct' reads layout 3 (nvfp4_relayout(w_packed, 3)) or 4, got layout {layout}",
            )
            torch._check(
                K % 128 == 0,
                lambda: f"{op}: path 'direct' needs K % 128 == 0 (whole 64-byte pieces of every row), got K = {K}; "
                "path 'mma' reads layout 3 at K % 16 == 0",
            )
            return x.new_empty((M, N))
        torch._check(
            layout == 0 or path in ("auto", "mma", "wgmma"),
            lambda: f"{op}: layout {layout} (a decode order) runs on paths 'mma' and 'wgmma', got path '{path}'; "
            f"nvfp4_relayout(w_packed, {layout}, inverse=True) gives the layout-0 weight the other paths read",
        )
        if path == "tile":
            torch._check(
                K % 128 == 0,
                lambda: f"{op}: kernel 'tile' needs K % 128 == 0 (8 whole scale blocks per k tile), got K = {K}; "
                "use kernel 'mma' or 'auto'",
            )
        if path == "wgmma":
            _check_nvfp4_wgmma(x, M, N, K, op)
    return x.new_empty((M, N))


def _nvfp4_gemm_sm90a_fake(x, w_packed, w_scale, global_scale, bias=None, layout=0):
    op = "nvfp4_gemm"
    M, N, K = _validate_nvfp4_gemv(x, w_packed, w_scale, global_scale, bias, op)
    _check_nvfp4_layout(layout, x.dtype, op)
    torch._check(
        K % 64 == 0,
        lambda: f"{op}: K must be a multiple of 64 on this path (a stage is 64 of K and its 4 block scales one "
        f"aligned 32-bit word), got K = {K}; nvfp4_gemv takes K % 16 == 0",
    )
    _check_dq_path(x, M, N, K, op)
    return x.new_empty((M, N))


def _nvfp4_gemv_sm90a_fake(x, w_packed, w_scale, global_scale, bias=None, layout=0, static_weight=False):
    op = "nvfp4_gemv"
    M, N, K = _validate_nvfp4_gemv(x, w_packed, w_scale, global_scale, bias, op)
    _check_nvfp4_layout(layout, x.dtype, op)
    _check_nvfp4_wgmma(x, M, N, K, op)
    return x.new_empty((M, N))


def _check_relayout_operand(t, layout, dtype, op: str, name: str) -> None:
    """The relayout ops' shared checks (checks.h validate_nvfp4_relayout, nvfp4_tiles.h
    relayout_scale): a layout 0..4, a contiguous 2-D tensor of the operand's dtype."""
    _check_nvfp4_layout_value(layout, op, tiled_ok=True)
    _check_dim(t, 2, op, name)
    _check_dtype(t, dtype, op, name)
    _check_contiguous(t, op, name)


@torch.library.register_fake("torchquant::nvfp4_relayout")
def _nvfp4_relayout_fake(w_packed, layout, inverse=False):
    op = "nvfp4_relayout"
    _check_relayout_operand(w_packed, layout, torch.uint8, op, "w_packed")
    torch._check(
        w_packed.shape[1] % 8 == 0,
        lambda: f"{op}: K = 2 * w_packed.size(1) must be a multiple of 16, got {w_packed.shape[1] * 2}",
    )
    if layout == 4:
        _check_nvfp4_tiled_shape(w_packed.shape[0], w_packed.shape[1] * 2, op)
    return torch.empty_like(w_packed, memory_format=torch.contiguous_format)


@torch.library.register_fake("torchquant::nvfp4_relayout_scale")
def _nvfp4_relayout_scale_fake(w_scale, layout, inverse=False):
    op = "nvfp4_relayout_scale"
    _check_relayout_operand(w_scale, layout, torch.float8_e4m3fn, op, "w_scale")
    if layout == 4:
        _check_nvfp4_tiled_shape(w_scale.shape[0], w_scale.shape[1] * 16, op)
    return torch.empty_like(w_scale, memory_format=torch.contiguous_format)


@torch.library.register_fake("torchquant::quantize_nvfp4")
def _quantize_nvfp4_fake(w):
    _validate_weight_2d(w, "quantize_nvfp4", 16)
    N, K = w.shape
    return (
        w.new_empty((N, K // 2), dtype=torch.uint8),
        w.new_empty((N, K // 16), dtype=torch.float8_e4m3fn),
        w.new_empty((), dtype=torch.float32),
    )


@torch.library.register_fake("torchquant::dequantize_nvfp4")
def _dequantize_nvfp4_fake(w_packed, scale, global_scale, out_dtype=None):
    op = "dequantize_nvfp4"
    _check_dim(w_packed, 2, op, "w_packed")
    _check_dim(scale, 2, op, "scale")
    _check_dtype(w_packed, torch.uint8, op, "w_packed")
    _check_dtype(scale, torch.float8_e4m3fn, op, "scale")
    _check_global_scale(global_scale, op)
    _check_contiguous(w_packed, op, "w_packed")
    _check_contiguous(scale, op, "scale")
    _check_same_device(w_packed, scale, op, "scale")
    _check_same_device(w_packed, global_scale, op, "global_scale")
    N, K = w_packed.shape[0], w_packed.shape[1] * 2
    _check_all((N > 0, K > 0), lambda: f"{op}: w_packed must be non-empty, got shape {_shape(w_packed.shape)}")
    torch._check(K % 16 == 0, lambda: f"{op}: K = 2 * w_packed.size(1) must be a multiple of 16, got {K}")
    _check_all(
        (scale.shape[0] == N, scale.shape[1] == K // 16),
        lambda: f"{op}: scale must be [N, K/16] = [{N}, {K // 16}], got {_shape(scale.shape)}",
    )
    od = _check_out_dtype(out_dtype, op)
    return w_packed.new_empty((N, K), dtype=od)


# ------------------------------------------------------------------ 2:4 fakes --
def _validate_sparse24_input(w, op: str) -> None:
    """validate_sparse24_input (prune24, compress24)."""
    _check_dim(w, 2, op, "w")
    _check_dtype_in(w, _SPARSE_DTYPES, _SPARSE_WORDS, op, "w")
    _check_contiguous(w, op, "w")
    N, K = w.shape
    _check_all((N > 0, K > 0), lambda: f"{op}: w must be non-empty, got shape {_shape(w.shape)}")
    torch._check(K % 4 == 0, lambda: f"{op}: K = w.size(1) must be a multiple of 4, got {K}")


@torch.library.register_fake("torchquant::prune24")
def _prune24_fake(w):
    _validate_sparse24_input(w, "prune24")
    return torch.empty_like(w), w.new_empty(w.shape, dtype=torch.bool)


@torch.library.register_fake("torchquant::compress24")
def _compress24_fake(w):
    _validate_sparse24_input(w, "compress24")
    N, K = w.shape
    return w.new_empty((N, K // 2)), w.new_empty((N, (K + 7) // 8), dtype=torch.uint8)


@torch.library.register_fake("torchquant::decompress24")
def _decompress24_fake(values, meta):
    op = "decompress24"
    _check_dim(values, 2, op, "values")
    _check_dim(meta, 2, op, "meta")
    _check_dtype_in(values, _SPARSE_DTYPES, _SPARSE_WORDS, op, "values")
    _check_dtype(meta, torch.uint8, op, "meta")
    _check_contiguous(values, op, "values")
    _check_contiguous(meta, op, "meta")
    _check_same_device(values, meta, op, "meta")
    N, K = values.shape[0], values.shape[1] * 2
    torch._check(N > 0, lambda: f"{op}: values must be non-empty, got shape {_shape(values.shape)}")
    _check_all(
        (K > 0, K % 4 == 0),
        lambda: f"{op}: values must be [N, K/2] with K a multiple of 4, got {_shape(values.shape)}",
    )
    _check_all(
        (meta.shape[0] == N, meta.shape[1] == (K + 7) // 8),
        lambda: f"{op}: meta must be [N, ceil(K/8)] = [{N}, {(K + 7) // 8}], got {_shape(meta.shape)}",
    )
    return values.new_empty((N, K))


def _check_sparse24_weight(values, meta, K, op: str, vname: str, mname: str) -> None:
    """check_sparse24_weight: values [N, K/2], meta uint8 [N, ceil(K/8)], both contiguous."""
    _check_dim(values, 2, op, vname)
    _check_dim(meta, 2, op, mname)
    _check_dtype(meta, torch.uint8, op, mname)
    _check_contiguous(values, op, vname)
    _check_contiguous(meta, op, mname)
    torch._check(
        values.shape[1] * 2 == K,
        lambda: f"{op}: {vname} must be [N, K/2] = [N, {K // 2}] for K = {K}, got {_shape(values.shape)}",
    )
    _check_all(
        (meta.shape[0] == values.shape[0], meta.shape[1] == (K + 7) // 8),
        lambda: f"{op}: {mname} must be [N, ceil(K/8)] = [{values.shape[0]}, {(K + 7) // 8}], "
        f"got {_shape(meta.shape)}",
    )


def _validate_sparse24_gemv(x, values, meta, bias):
    """validate_sparse24_gemv; returns (M, N, K)."""
    op = "sparse24_gemv"
    _check_dim(x, 2, op, "x")
    _check_dtype_in(x, HALF_DTYPES, _HALF_WORDS, op, "x")
    _check_contiguous(x, op, "x")
    _check_same_device(x, values, op, "values")
    _check_same_device(x, meta, op, "meta")
    torch._check(
        values.dtype == x.dtype,
        lambda: f"{op}: values dtype {_dtype_name(values.dtype)} must match x dtype {_dtype_name(x.dtype)}",
    )
    M, K = x.shape
    torch._check(values.dim() == 2, lambda: f"{op}: values must be 2-D, got shape {_shape(values.shape)}")
    N = values.shape[0]
    _check_nonempty(M, N, K, op)
    torch._check(K % 4 == 0, lambda: f"{op}: K must be a multiple of 4 (2:4 groups), got {K}")
    _check_all((M < _DIM_MAX, N < _DIM_MAX, K < _DIM_MAX), f"{op}: M, N and K must be below 2^31 - 256")
    _check_sparse24_weight(values, meta, K, op, "values", "meta")
    _check_bias(bias, x, N, op, match_ref=True)
    return M, N, K


def _check_sparse24_wgmma(lead, M, N, K, op: str) -> None:
    """check_path of csrc/sparse/sparse24_gemm_sm90a.cu: the 2:4 ops' path 'wgmma'."""
    _check_cuda(lead, op, "operands must be CUDA tensors")
    torch._check(
        K % 128 == 0,
        lambda: f"{op}: path 'wgmma' needs K % 128 == 0 (TMA copies the meta rows, K / 8 bytes, which must be "
        f"a multiple of 16), got K = {K}; path 'mma' takes K % 32 == 0",
    )
    _check_tma(M, N, op)


def _check_k32(path: str, K, op: str, fallback: str) -> None:
    torch._check(
        K % 32 == 0, lambda: f"{op}: kernel '{path}' needs K % 32 == 0, got K = {K}; use '{fallback}' or 'auto'"
    )


@torch.library.register_fake("torchquant::sparse24_gemv")
def _sparse24_gemv_fake(x, values, meta, bias=None, path="auto"):
    op = "sparse24_gemv"
    M, N, K = _validate_sparse24_gemv(x, values, meta, bias)
    if _check_path(path, x, op):  # sparse24.cu
        if path == "mma":
            _check_k32(path, K, op, "fma")
        if path == "wgmma":
            _check_sparse24_wgmma(x, M, N, K, op)
    return x.new_empty((M, N))


def _sparse24_gemm_sm90a_fake(x, values, meta, bias=None):
    M, N, K = _validate_sparse24_gemv(x, values, meta, bias)
    _check_sparse24_wgmma(x, M, N, K, "sparse24_gemv")
    return x.new_empty((M, N))


def _validate_sparse24_int8_matmul(a_q, a_scale, a_zero, w_values, w_meta, w_scale, w_colsum, bias, out_dtype):
    """validate_sparse24_int8_matmul; returns (M, N, K, out dtype)."""
    op = "sparse24_int8_matmul"
    _check_dim(a_q, 2, op, "a_q")
    _check_dtype(a_q, torch.int8, op, "a_q")
    _check_contiguous(a_q, op, "a_q")
    _check_dim(w_values, 2, op, "w_values")
    _check_dtype(w_values, torch.int8, op, "w_values")
    M, K = a_q.shape
    N = w_values.shape[0]
    _check_nonempty(M, N, K, op)
    torch._check(K % 4 == 0, lambda: f"{op}: K must be a multiple of 4 (2:4 groups), got {K}")
    torch._check(
        K <= _INT8_MAX_K,
        lambda: f"{op}: K = {K} exceeds {_INT8_MAX_K}, beyond which the int32 accumulator can overflow",
    )
    _check_all((M < _DIM_MAX, N < _DIM_MAX), f"{op}: M and N must be below 2^31 - 256")
    for t, name in ((a_scale, "a_scale"), (w_values, "w_values"), (w_meta, "w_meta"), (w_scale, "w_scale")):
        _check_same_device(a_q, t, op, name)
    _check_sparse24_weight(w_values, w_meta, K, op, "w_values", "w_meta")
    od = _validate_int8_epilogue(a_q, a_scale, a_zero, w_scale, w_colsum, bias, out_dtype, M, N, op)
    return M, N, K, od


@torch.library.register_fake("torchquant::sparse24_int8_matmul")
def _sparse24_int8_matmul_fake(
    a_q, a_scale, a_zero, w_values, w_meta, w_scale, w_colsum=None, bias=None, out_dtype=None, path="auto",
    static_weight=False,
):
    op = "sparse24_int8_matmul"
    M, N, K, od = _validate_sparse24_int8_matmul(
        a_q, a_scale, a_zero, w_values, w_meta, w_scale, w_colsum, bias, out_dtype
    )
    if _check_path(path, a_q, op):  # sparse24.cu
        if path in ("gemv", "mma"):
            _check_k32(path, K, op, "simt")
        if path == "wgmma":
            _check_sparse24_wgmma(a_q, M, N, K, op)
    return a_q.new_empty((M, N), dtype=od)


def _sparse24_int8_gemm_sm90a_fake(
    a_q, a_scale, a_zero, w_values, w_meta, w_scale, w_colsum=None, bias=None, out_dtype=None
):
    M, N, K, od = _validate_sparse24_int8_matmul(
        a_q, a_scale, a_zero, w_values, w_meta, w_scale, w_colsum, bias, out_dtype
    )
    _check_sparse24_wgmma(a_q, M, N, K, "sparse24_int8_matmul")
    return a_q.new_empty((M, N), dtype=od)


# ------------------------------------------------------------- sm_90a fakes --
# The private sm_90a ops (csrc/sm90a_module.cpp): the public op's validation under the name
# their C++ uses, plus their own preconditions; CUDA tensors only.
_SM90A_FAKES = {
    "_int8_gemm_sm90a": _int8_gemm_sm90a_fake,
    "_sparse24_int8_gemm_sm90a": _sparse24_int8_gemm_sm90a_fake,
    "_sparse24_gemm_sm90a": _sparse24_gemm_sm90a_fake,
    "_fp8_block_gemm_sm90a": _fp8_block_gemm_sm90a_fake,
    "_nvfp4_gemm_sm90a": _nvfp4_gemm_sm90a_fake,
    "_fp8_block_gemv_sm90a": _fp8_block_gemv_sm90a_fake,
    "_nvfp4_gemv_sm90a": _nvfp4_gemv_sm90a_fake,
}


def _register_sm90a_fakes() -> None:
    # Every schema above is declared by csrc/sm90a_module.cpp; a stale module built before
    # one of them existed simply lacks that op (nothing to register).
    for name, fake in _SM90A_FAKES.items():
        if hasattr(torch.ops.torchquant, name):
            torch.library.register_fake(f"torchquant::{name}")(fake)
