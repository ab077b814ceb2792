"""QuantLinear: nn.Linear with an INT8 (W8A8), FP8-block (W8A16), NVFP4 (W4A16) or 2:4 sparse weight.

Weights live in registered buffers in the storage formats of formats.md, so
`state_dict`, `load_state_dict`, `.to(device)` and safetensors work as for
any module. The forward pass is inference only (no autograd) and is one or
two torchquant ops, so CUDA graph capture and torch.compile(fullgraph=True)
trace it without graph breaks.

  int8       dynamic per-token activation quantization (symmetric, or
             asymmetric with a zero point) + int8_matmul with the fused
             epilogue: two launches.
  fp8_block  fp8_block_gemv for decode; for prefill either dequantize +
             cuBLAS (prefill="dequant", the default, M > 64: W8A16 numerics
             at every M) or, with prefill="w8a8" (M > 16), the activation
             quantized to e4m3 in 1 x 128 blocks (quantize_fp8_act) and an
             FP8 tensor-core GEMM (torch._scaled_mm with blockwise scales, on
             Hopper; emulated in fp32 elsewhere). w8a8 is faster (H200, M =
             2048, 28672x8192: see benchmarks/results) but adds the activation
             rounding error (e4m3: up to 2^-4 relative per element).
  nvfp4      nvfp4_gemv for M <= 64; dequantize + cuBLAS above (Hopper: a
             decoding wgmma GEMM where it pays). On a GPU of compute
             capability 8.0+ the packed weight is kept in memory in the GEMVs'
             decode order for the layer's dtype (nvfp4_layout="auto", the
             default: layout 3 for bf16, 2 for fp16; docs/nvfp4_gemv.md 23,
             29-30), in the formats.md packing (layout 0) on the CPU and
             older GPUs; it follows the layer through .to(device) and dtype
             casts. state_dict always holds the formats.md packing (converted
             on save and load); _packed_layout0() gives it. 0 / 1 / 2 / 3 /
             "decode" pin a layout. Layouts 1 (bf16) and 2 (fp16) give layout
             0's bits on every path. Layout 3 is layout 1's decode on adjacent
             codes: the mma / wgmma GEMVs read it with x unpermuted (within
             the same fp32-accumulation bound, other partial sums than layout
             0's), the decoding GEMM with layout 0's bits, and the direct GEMV
             runs it at M <= 8 on one-wave layers with K <= 4096 (and, on
             cards with few DRAM bytes per issue slot such as the H100, on
             long rows and larger layers at small M). Input of the other
             16-bit dtype and dequantize + cuBLAS work from a converted copy.
             fp8_tiled=True keeps the weight and its scales in memory per 16-row
             tile (fp8_block_tile; N % 16, K % 64 and block_size % 64 == 0), which
             the decode GEMVs read with whole-line loads: on an H100 the fused
             Llama-3-8B layer's four fp8_block_gemv calls (bench_e2e's op rows)
             81.6 / 84.5 us against 83.6 / 88.0 at M = 1 / 8
             (results/h100/2026-12-07i_call10; docs/fp8_gemv.md "The tiled
             weight"). The sm_90 dequantizing GEMM (prefill from M = 17 there)
             reads it in place; dequantize + cuBLAS and GPUs older than sm_80
             read rows and untile a copy per call. Not with prefill="w8a8".
             Off by default: the H200 has not timed it.
             state_dict holds the row-major tensors either way.
  sparse24   the weight pruned 2:4 (prune24) and stored compressed in the
             layer's fp16/bf16 dtype (values [N, K/2] + meta): sparse24_gemv
             for M <= 64; decompress24 + cuBLAS above.
  int8_sparse24
             W8A8 as int8, the weight pruned 2:4, then quantized per channel
             and compressed: quantize_int8 + sparse24_int8_matmul, two launches.

static_weights=True (fp8_block, nvfp4, int8 and int8_sparse24; default False) is the promise that
the layer's weight buffers are not written on the GPU between calls other
than through the layer itself (load_state_dict, .to(), the builders), as
in inference with loaded weights. On sm_90 the decode GEMVs then start
streaming the weight before the kernel just before them has finished
(programmatic dependent launch, csrc/common/pdl.h). Measured on an H100
(benchmarks/results/h100/2026-12-05d_static): 4-7 % off a Llama-3-8B
decode layer's four GEMVs at M = 1 in every format, and at M = 8 for
fp8_block and int8. The layer's own writes are followed by a one-element
fill kernel, which orders them before any later GEMV. A weight written
otherwise (say `layer.weight_q.copy_(w)`) must be fenced before the layer
runs: assign `layer.static_weights = True` again (which fences), or run
any torch op that is not a torchquant op on that stream (torchquant's decode
and quantize kernels launch with PDL themselves and do not order it), or
turn the flag off; otherwise the GEMV could read the old values. It changes
no result, and nothing on the CPU.
"""

from __future__ import annotations

import numbers
from typing import Optional, Tuple, Union

import torch
from torch import Tensor, nn

import torchquant  # noqa: F401  (registers the ops)
from torchquant import formats
from torchquant.formats.interop import as_channel_scale
from torchquant.formats._common import check_finite
from torchquant.nn.dispatch import choose_path

FORMATS = ("int8", "fp8_block", "nvfp4", "sparse24", "int8_sparse24")
# What in_features must be a multiple of, per format: fp8_block_gemv and the
# nvfp4 ops take K in whole 16-element blocks; compress24 works on groups of
# 4 along K. quantize_model skips (with a warning) layers that do not fit.
K_MULTIPLE = {"fp8_block": 16, "nvfp4": 16, "sparse24": 4, "int8_sparse24": 4}
_ops = torch.ops.torchquant
_EXTRA_STATE_VERSION = 1  # of QuantLinear.get_extra_state's [version, block_size]


def layer_dtype(weight_dtype: torch.dtype, dtype: Optional[torch.dtype] = None) -> torch.dtype:
    """from_float's layer dtype: `dtype` if given, else the weight's if fp16 / bf16, else bf16."""
    return dtype or (weight_dtype if weight_dtype in (torch.float16, torch.bfloat16) else torch.bfloat16)


def w8a8_prefill_ok(format: str, block_size: int, in_features: int, out_features: int) -> bool:
    """Whether a layer can take prefill="w8a8": torch._scaled_mm's blockwise
    scaling wants 1 x 128 blocks on both operands, K a whole number of blocks
    and N a multiple of 16, so format "fp8_block" with block_size 128."""
    return format == "fp8_block" and block_size == 128 and in_features % 128 == 0 and out_features % 16 == 0


class QuantLinear(nn.Module):
    """y = x @ W^T + b with W stored quantized. Build it with `from_float`."""

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        format: str = "int8",
        *,
        block_size: int = 128,
        act_symmetric: bool = True,
        prefill: str = "dequant",
        dtype: torch.dtype = torch.bfloat16,
        nvfp4_layout: Union[int, str] = "auto",
        static_weights: bool = False,
        fp8_tiled: bool = False,
        device=None,
    ) -> None:
        super().__init__()
        if format not in FORMATS:
            raise ValueError(f"QuantLinear: format must be one of {FORMATS}, got {format!r}")
        mult = K_MULTIPLE.get(format, 1)
        if in_features % mult:
            why = " (2:4 groups of 4 along K)" if mult == 4 else ""
            raise ValueError(f"QuantLinear: {format} needs in_features divisible by {mult}{why}, got {in_features}")
        if dtype not in (torch.float16, torch.bfloat16, torch.float32):
            raise TypeError(f"QuantLinear: dtype must be a float dtype, got {dtype}")
        if format == "sparse24" and dtype == torch.float32:
            # sparse24_gemv takes fp16/bf16 only (products exact in fp32).
            raise TypeError("QuantLinear: sparse24 stores its values in float16 or bfloat16, got dtype float32")
        if format in ("fp8_block", "nvfp4") and dtype == torch.float32:
            # W8A16 / W4A16: the decode kernels take fp16 / bf16 activations (an fp32 x is cast to the
            # layer dtype); a float32 layer was accepted here and then failed at every decode M.
            raise TypeError(f"QuantLinear: {format} runs float16 or bfloat16 activations (W{8 if format == 'fp8_block' else 4}A16); "
                            "dtype must be float16 or bfloat16, got float32")
        if not isinstance(act_symmetric, bool):
            raise TypeError(f"QuantLinear: act_symmetric must be a bool, got {act_symmetric!r}")
        if not isinstance(block_size, numbers.Integral) or isinstance(block_size, bool):
            raise TypeError(f"QuantLinear: block_size must be an int, got {block_size!r}")
        block_size = int(block_size)
        if format == "fp8_block" and not (16 <= block_size <= 256 and block_size % 16 == 0):
            raise ValueError(f"QuantLinear: fp8_block's block_size must be a multiple of 16 in [16, 256], got {block_size}")
        if prefill not in ("dequant", "w8a8"):
            raise ValueError(f"QuantLinear: prefill must be 'dequant' or 'w8a8', got {prefill!r}")
        if prefill == "w8a8" and not w8a8_prefill_ok(format, block_size, in_features, out_features):
            raise ValueError(
                "QuantLinear: prefill='w8a8' needs format 'fp8_block' with block_size 128, in_features a "
                f"multiple of 128 and out_features a multiple of 16, got format={format!r}, "
                f"block_size={block_size}, in_features={in_features}, out_features={out_features}")
        if not isinstance(fp8_tiled, bool):
            raise TypeError(f"QuantLinear: fp8_tiled must be a bool, got {fp8_tiled!r}")
        if fp8_tiled:
            _check_fp8_tiled_layer(format, block_size, in_features, out_features, prefill)
        self.fp8_tiled = fp8_tiled
        # "auto": the layout follows the device (and dtype) the layer is on, here and in _apply.
        self.nvfp4_auto = format == "nvfp4" and isinstance(nvfp4_layout, str) and nvfp4_layout == "auto"
        # (the device the buffers will be on: `device`, else the default device, e.g. a `with
        # torch.device(...)` block)
        self.nvfp4_layout = _resolve_nvfp4_layout(nvfp4_layout, format, dtype, torch.empty(0, device=device).device)
        self.prefill = prefill
        self.in_features, self.out_features = in_features, out_features
        self.format, self.block_size, self.act_symmetric, self.dtype = format, block_size, act_symmetric, dtype
        N, K = out_features, in_features
        kw = dict(device=device)
        if format == "int8":
            self.register_buffer("weight_q", torch.zeros(N, K, dtype=torch.int8, **kw))
            self.register_buffer("weight_scale", torch.ones(N, dtype=torch.float32, **kw))
            self.register_buffer("weight_colsum", torch.zeros(N, dtype=torch.int32, **kw))
        elif format == "fp8_block":
            nb = (K + block_size - 1) // block_size
            self.register_buffer("weight_q", torch.zeros(N, K, dtype=torch.float8_e4m3fn, **kw))
            self.register_buffer("weight_scale", torch.ones(N, nb, dtype=torch.float32, **kw))
        elif format in ("sparse24", "int8_sparse24"):
            # compress24's form: the two kept values of every group of 4, and
            # their 2-bit positions (a nibble per group). The empty layer holds
            # positions 0 and 1 of each group (nibble 0b0100), a valid encoding.
            vdt = dtype if format == "sparse24" else torch.int8
            self.register_buffer("weight_values", torch.zeros(N, K // 2, dtype=vdt, **kw))
            self.register_buffer("weight_meta", torch.full((N, (K + 7) // 8), 0x44, dtype=torch.uint8, **kw))
            if format == "int8_sparse24":
                self.register_buffer("weight_scale", torch.ones(N, dtype=torch.float32, **kw))
                self.register_buffer("weight_colsum", torch.zeros(N, dtype=torch.int32, **kw))
        else:
            self.register_buffer("weight_packed", torch.zeros(N, K // 2, dtype=torch.uint8, **kw))
            self.register_buffer("weight_scale", torch.zeros(N, K // 16, dtype=torch.float8_e4m3fn, **kw))
            self.register_buffer("weight_global_scale", torch.ones((), dtype=torch.float32, **kw))
        if bias:
            self.register_buffer("bias", torch.zeros(N, dtype=dtype, **kw))
        else:
            self.bias = None
        # Before any other load hook: a quantized buffer takes its own dtype only.
        self.register_load_state_dict_pre_hook(_check_storage_dtypes)
        if format == "nvfp4":
            # state_dict holds the formats.md packing whatever the layout in memory.
            self.register_state_dict_post_hook(_packed_to_layout0)
            self.register_load_state_dict_pre_hook(_packed_from_layout0)
        if fp8_tiled:
            # and the row-major fp8_block tensors whatever the order in memory
            self.register_state_dict_post_hook(_fp8_to_rows)
            self.register_load_state_dict_pre_hook(_fp8_from_rows)
        self.register_load_state_dict_post_hook(_fence_after_load)
        self._static_weights = False
        self.static_weights = static_weights  # the setter checks the type; after the buffers' fills (it fences)

    # ------------------------------------------------------------ building --
    @classmethod
    @torch.no_grad()
    def from_float(cls, linear: nn.Linear, format: str = "int8", *, block_size: int = 128,
                   act_symmetric: bool = True, prefill: str = "dequant",
                   dtype: Optional[torch.dtype] = None, nvfp4_layout: Union[int, str] = "auto",
                   static_weights: bool = False, fp8_tiled: bool = False) -> "QuantLinear":
        """Quantize an nn.Linear's weight (per formats.md) into a new QuantLinear."""
        w = linear.weight.detach()
        dt = layer_dtype(w.dtype, dtype)
        q = cls(linear.in_features, linear.out_features, linear.bias is not None, format,
                block_size=block_size, act_symmetric=act_symmetric, prefill=prefill, dtype=dt,
                nvfp4_layout=nvfp4_layout, fp8_tiled=fp8_tiled, device=w.device)
        wf = w.float().contiguous()
        # The quantize ops check finiteness on CPU only (no host sync on the
        # GPU activation path); weights are checked here on any device.
        check_finite(wf, "QuantLinear.from_float", "weight")
        if format == "int8":
            w_q, s, _ = _ops.quantize_int8(wf, True, True)
            q.weight_q.copy_(w_q)
            q.weight_scale.copy_(s)
            q.weight_colsum.copy_(formats.int8_colsum(w_q))
        elif format == "fp8_block":
            w_q, s = _ops.quantize_fp8_block(wf, block_size)
            if fp8_tiled:
                w_q, s = _ops.fp8_block_tile(w_q, s)
            q.weight_q.copy_(w_q)
            q.weight_scale.copy_(s)
        elif format == "sparse24":
            # Prune in fp32 (the magnitudes the model has), then round the kept
            # values to the layer dtype: rounding first could change which two
            # of a group are largest (ties after rounding).
            pruned, _ = _ops.prune24(wf)
            values, meta = _ops.compress24(pruned.to(dt))
            q.weight_values.copy_(values)
            q.weight_meta.copy_(meta)
        elif format == "int8_sparse24":
            # Prune first, then quantize per channel: the row's amax is always
            # kept (it is the largest of its group), and the pruned zeros stay
            # code 0, so the int8 weight is still 2:4. The column sums are the
            # int8 format's, taken over the dense (pruned) int8 weight.
            pruned, _ = _ops.prune24(wf)
            w_q, s, _ = _ops.quantize_int8(pruned, True, True)
            values, meta = _ops.compress24(w_q)
            q.weight_values.copy_(values)
            q.weight_meta.copy_(meta)
            q.weight_scale.copy_(s)
            q.weight_colsum.copy_(formats.int8_colsum(w_q))
        else:
            p, s, g = _ops.quantize_nvfp4(wf)
            q.weight_packed.copy_(q._packed_in_layout(p))
            q.weight_scale.copy_(s)
            q.weight_global_scale.copy_(g)
        if linear.bias is not None:
            q.bias.copy_(linear.bias.detach().to(dt))
        q.static_weights = static_weights  # after the copies above (the setter fences)
        return q

    @classmethod
    def from_nvfp4(cls, w_packed: Tensor, scale: Tensor, global_scale: Tensor, bias: Optional[Tensor] = None,
                   dtype: torch.dtype = torch.bfloat16, nvfp4_layout: Union[int, str] = "auto") -> "QuantLinear":
        """Wrap NVFP4 tensors already in our layout (see formats.interop for ModelOpt / compressed-tensors).
        w_packed is the formats.md packing; nvfp4_layout keeps it in memory in a decode order."""
        if w_packed.dim() != 2:
            raise ValueError(f"QuantLinear.from_nvfp4: w_packed must be [N, K/2], got shape {tuple(w_packed.shape)}")
        N, Kh = w_packed.shape
        q = cls(2 * Kh, N, bias is not None, "nvfp4", dtype=dtype, nvfp4_layout=nvfp4_layout, device=w_packed.device)
        # checked as given (formats.md packing), then put in the layer's layout
        _copy_checked(q, "weight_packed", w_packed, "from_nvfp4")
        if q.nvfp4_layout:
            q.weight_packed.copy_(q._packed_in_layout(q.weight_packed))
        _copy_checked(q, "weight_scale", scale, "from_nvfp4")
        if global_scale.numel() != 1:
            raise ValueError(f"QuantLinear.from_nvfp4: global_scale must hold one element, got shape {tuple(global_scale.shape)}")
        _copy_checked(q, "weight_global_scale", global_scale.reshape(()), "from_nvfp4")
        if bias is not None:
            _copy_checked(q, "bias", bias, "from_nvfp4")
        return q

    @classmethod
    def from_fp8_block(cls, w_q: Tensor, scale: Tensor, block_size: int = 128, bias: Optional[Tensor] = None,
                       dtype: torch.dtype = torch.bfloat16, prefill: str = "dequant",
                       fp8_tiled: bool = False) -> "QuantLinear":
        """Wrap an e4m3 weight [N, K] and its fp32 block scales [N, ceil(K / block_size)] (row-major,
        formats.md); fp8_tiled keeps them in memory per 16-row tile."""
        if w_q.dim() != 2:
            raise ValueError(f"QuantLinear.from_fp8_block: w_q must be [N, K], got shape {tuple(w_q.shape)}")
        N, K = w_q.shape
        q = cls(K, N, bias is not None, "fp8_block", block_size=block_size, prefill=prefill, dtype=dtype,
                fp8_tiled=fp8_tiled, device=w_q.device)
        _copy_checked(q, "weight_q", w_q, "from_fp8_block")
        _copy_checked(q, "weight_scale", scale, "from_fp8_block")
        if fp8_tiled:  # checked as given (rows), then tiled in place
            tq, ts = _ops.fp8_block_tile(q.weight_q, q.weight_scale)
            q.weight_q.copy_(tq)
            q.weight_scale.copy_(ts)
        if bias is not None:
            _copy_checked(q, "bias", bias, "from_fp8_block")
        return q

    @classmethod
    def from_int8(cls, w_q: Tensor, scale: Tensor, bias: Optional[Tensor] = None, *, act_symmetric: bool = True,
                  dtype: torch.dtype = torch.bfloat16) -> "QuantLinear":
        """Wrap a symmetric int8 weight [N, K] with its per-channel ([N] or [N, 1]) or per-tensor fp32
        dequantization scale (a W8A8 checkpoint, e.g. formats.interop.int8_from_compressed_tensors);
        activations are quantized per token at run time (act_symmetric as in from_float)."""
        if w_q.dim() != 2:
            raise ValueError(f"QuantLinear.from_int8: w_q must be [N, K], got shape {tuple(w_q.shape)}")
        N, K = w_q.shape
        q = cls(K, N, bias is not None, "int8", act_symmetric=act_symmetric, dtype=dtype, device=w_q.device)
        _copy_checked(q, "weight_q", w_q, "from_int8")
        _copy_checked(q, "weight_scale", as_channel_scale(scale, N), "from_int8")
        if not bool(torch.isfinite(q.weight_scale).all()):
            raise ValueError("QuantLinear.from_int8: scale holds NaN or Inf")
        q.weight_colsum.copy_(formats.int8_colsum(q.weight_q))
        if bias is not None:
            _copy_checked(q, "bias", bias, "from_int8")
        return q

    # ------------------------------------------------------- state_dict extras --
    # The one setting the buffers' meaning depends on that their shapes cannot tell: fp8_block's
    # block_size (128, 144 and 160 give the same scale shape at K = 256). Saved as
    # "<prefix>_extra_state" = int64 [version, block_size]; a state dict from another block size
    # is refused. State dicts written before it existed load as before.
    def get_extra_state(self) -> Tensor:
        return torch.tensor([_EXTRA_STATE_VERSION, self.block_size], dtype=torch.int64)

    def set_extra_state(self, state) -> None:
        if not isinstance(state, Tensor) or state.dim() != 1 or state.numel() < 2 or state.is_floating_point():
            raise RuntimeError(f"QuantLinear: _extra_state must be an integer [version, block_size] tensor, got {state!r}")
        version, bs = int(state[0]), int(state[1])
        if version != _EXTRA_STATE_VERSION:
            raise RuntimeError(f"QuantLinear: _extra_state version {version} is not one this torchquant reads "
                               f"({_EXTRA_STATE_VERSION})")
        if self.format == "fp8_block" and bs != self.block_size:
            raise RuntimeError(f"QuantLinear (fp8_block): the state dict was saved with block_size {bs}, this layer "
                               f"has block_size {self.block_size}; build it with block_size={bs}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)
        key = prefix + "_extra_state"
        if key not in state_dict and key in missing_keys:
            missing_keys.remove(key)  # written before the extra state existed
        # int8 / int8_sparse24 without column sums (strict=False): derived from the weight rather
        # than left at zero, which would give asymmetric activations wrong outputs
        src = {"int8": "weight_q", "int8_sparse24": "weight_values"}.get(self.format)
        if src and prefix + "weight_colsum" not in state_dict and prefix + src in state_dict:
            w = getattr(self, src)
            if not w.is_meta:
                with torch.no_grad():
                    self.weight_colsum.copy_(w.to(torch.int32).sum(1, dtype=torch.int32))

    # -------------------------------------------------------- static weights --
    @property
    def static_weights(self) -> bool:
        """See the module docstring: the fp8_block / nvfp4 GEMVs may load the weight before the
        kernel just before them finishes (sm_90). Setting it True fences the writes so far."""
        return self._static_weights

    @static_weights.setter
    def static_weights(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"QuantLinear: static_weights must be a bool, got {value!r}")
        self._static_weights = value
        self._fence_weights()

    def __setstate__(self, state) -> None:
        # copy.deepcopy and unpickling rebuild the buffers by copies: fence them like the layer's
        # own writes (modules pickled before the flag existed have none).
        super().__setstate__(state)
        if "_static_weights" not in self.__dict__:
            self._static_weights = False
        if "fp8_tiled" not in self.__dict__:
            self.fp8_tiled = False
        self._fence_weights()

    def _fence_weights(self) -> None:
        """With static_weights, order the layer's buffer writes so far before any later GEMV: a
        normally launched kernel (a one-element fill) on the current stream of the buffers' device
        starts only after every earlier kernel has finished, and a GEMV that loads its weight
        early can start no sooner than that fill does."""
        if not self._static_weights or torch.compiler.is_compiling():
            return
        for b in self._buffers.values():
            if b is not None and b.is_cuda:
                torch.zeros(1, device=b.device)
                return

    # ------------------------------------------------------------- running --
    def dequantized_weight(self, dtype: Optional[torch.dtype] = None) -> Tensor:
        dt = dtype or self.dtype
        if self.format == "int8":
            return (self.weight_q.float() * self.weight_scale[:, None]).to(dt)
        if self.format == "fp8_block":
            return _ops.dequantize_fp8_block(*self._fp8_rows(), self.block_size, dt)
        if self.format == "sparse24":
            return _ops.decompress24(self.weight_values, self.weight_meta).to(dt)
        if self.format == "int8_sparse24":
            w_q = _ops.decompress24(self.weight_values, self.weight_meta)
            return (w_q.float() * self.weight_scale[:, None]).to(dt)
        return _ops.dequantize_nvfp4(self._packed_layout0(), self.weight_scale, self.weight_global_scale, dt)

    def _fp8_rows(self) -> Tuple[Tensor, Tensor]:
        """(weight_q, weight_scale) row-major: the buffers themselves, or (fp8_tiled) untiled copies
        for the paths that read rows."""
        if not self.fp8_tiled:
            return self.weight_q, self.weight_scale
        return tuple(_ops.fp8_block_tile(self.weight_q, self.weight_scale, True))

    def _packed_layout0(self) -> Tensor:
        """weight_packed in the formats.md packing: the buffer itself, or (with an nvfp4_layout) a
        converted copy for the paths that read layout 0 only."""
        if self.nvfp4_layout == 0:
            return self.weight_packed
        return _ops.nvfp4_relayout(self.weight_packed, self.nvfp4_layout, True)

    def _packed_in_layout(self, p0: Tensor) -> Tensor:
        """p0, a packed weight in the formats.md packing, in this layer's layout (the inverse of
        _packed_layout0): p0 itself for layout 0, else a converted copy."""
        return _ops.nvfp4_relayout(p0.contiguous(), self.nvfp4_layout) if self.nvfp4_layout else p0

    def _packed_for(self, xa: Tensor) -> Tuple[Tensor, int, bool]:
        """(packed weight, layout, whether it is the buffer itself) for the nvfp4 kernels with x like
        xa: the buffer in its layout when that is xa's dtype's decode order and the device's kernels
        read it (or layout 0), else a layout-0 copy (a pinned decode order on a GPU older than sm_80;
        written just before the GEMV, so never loaded early)."""
        if self.nvfp4_layout == 0 or (self.nvfp4_layout in _DTYPE_LAYOUTS.get(xa.dtype, ()) and
                                      _reads_stored_orders(xa.device)):
            return self.weight_packed, self.nvfp4_layout, True
        return self._packed_layout0(), 0, False

    def forward(self, x: Tensor) -> Tensor:
        if x.dim() == 0 or x.shape[-1] != self.in_features:
            raise ValueError(f"QuantLinear: expected last dim {self.in_features}, got {tuple(x.shape)}")
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features)
        if not x2.is_contiguous():
            x2 = x2.contiguous()
        if x.dtype not in (torch.float16, torch.bfloat16, torch.float32):
            # nn.Linear raises on a dtype its weight does not have; casting (say float64
            # down to bf16) would hand back a silently different dtype and precision.
            raise TypeError(f"QuantLinear: x must be float32, float16 or bfloat16, got {x.dtype}")
        out_dtype = x.dtype
        if x2.shape[0] == 0:
            # An empty batch (an MoE expert no token was routed to, say) gives an empty
            # output, as nn.Linear does; the ops themselves reject empty operands.
            return x.new_empty((*lead, self.out_features), dtype=out_dtype)
        path = choose_path(self.format, x2.shape[0], x2.device, self.prefill, self.in_features, self.out_features)
        if path == "dequant_mm" and x2.device.type == "cpu":
            y = self._cpu_dequant_mm(x2).to(out_dtype)
        elif self.format == "int8":
            a_q, a_s, a_z = _ops.quantize_int8(x2, True, self.act_symmetric)
            y = _ops.int8_matmul(
                a_q, a_s, None if self.act_symmetric else a_z, self.weight_q, self.weight_scale,
                None if self.act_symmetric else self.weight_colsum, self.bias, out_dtype, "auto",
                self._static_weights,
            )
        elif self.format == "int8_sparse24":
            a_q, a_s, a_z = _ops.quantize_int8(x2, True, self.act_symmetric)
            y = _ops.sparse24_int8_matmul(
                a_q, a_s, None if self.act_symmetric else a_z, self.weight_values, self.weight_meta,
                self.weight_scale, None if self.act_symmetric else self.weight_colsum, self.bias, out_dtype, "auto",
                self._static_weights,
            )
        elif self.format == "sparse24":
            # sparse24_gemv needs x in the values' dtype. The activation is
            # cast, not the weight: the values were rounded once from fp32 when
            # built, and a bf16 -> fp16 weight cast could overflow or flush.
            vdt = self.weight_values.dtype
            xa = x2 if x2.dtype == vdt else x2.to(vdt)
            bias = None if self.bias is None else self.bias.to(vdt)
            if path == "dequant_mm":
                # NB: decompress24 validates meta on the device and reads the
                # verdict back (a host sync, see csrc/sparse/sparse24.cu), so
                # this prefill path cannot be captured in a CUDA graph.
                y = torch.nn.functional.linear(xa, _ops.decompress24(self.weight_values, self.weight_meta), bias)
            else:
                y = _ops.sparse24_gemv(xa, self.weight_values, self.weight_meta, bias, "auto")
            y = y.to(out_dtype)
        else:
            xa = x2 if x2.dtype in (torch.float16, torch.bfloat16) else x2.to(self.dtype)
            bias = None if self.bias is None else self.bias.to(xa.dtype)
            if path == "dequant_mm":
                y = torch.nn.functional.linear(xa, self.dequantized_weight(xa.dtype), bias)
            elif path in ("w8a8_mm", "w8a8_emulated"):
                y = self._w8a8(xa, bias, path == "w8a8_mm")
            elif path == "dq_wgmma" and self.format == "fp8_block":
                # a tiled weight is read in place (the GEMM's 4-D tensor map), no copy
                y = torch.ops.torchquant._fp8_block_gemm_sm90a(xa, self.weight_q, self.weight_scale, self.block_size,
                                                               bias, self.fp8_tiled)
            elif path == "dq_wgmma":
                wp, lay, _ = self._packed_for(xa)
                y = torch.ops.torchquant._nvfp4_gemm_sm90a(
                    xa, wp, self.weight_scale, self.weight_global_scale, bias, lay)
            elif self.format == "fp8_block" and self.fp8_tiled and not _reads_stored_orders(xa.device):
                # a GPU older than sm_80: its fma GEMV reads rows (a copy written just before it)
                y = _ops.fp8_block_gemv(xa, *self._fp8_rows(), self.block_size, bias, "auto", False)
            elif self.format == "fp8_block":
                y = _ops.fp8_block_gemv(xa, self.weight_q, self.weight_scale, self.block_size, bias, "auto",
                                        self._static_weights, self.fp8_tiled)
            else:
                wp, lay, own = self._packed_for(xa)
                y = _ops.nvfp4_gemv(xa, wp, self.weight_scale, self.weight_global_scale, bias, "auto", lay,
                                    self._static_weights and own)
            y = y.to(out_dtype)
        return y.reshape(*lead, self.out_features)

    def _cpu_dequant_mm(self, x2: Tensor) -> Tensor:
        """CPU, large M (dispatch.CPU_DEQUANT_MIN_M): the weight widened to fp32
        (each element one fp32 rounding of its dequantized value at most; exact
        for sparse24) and torch's fp32 GEMM, x and bias widened exactly."""
        bias = None if self.bias is None else self.bias.float()
        return torch.nn.functional.linear(x2.float(), self.dequantized_weight(torch.float32), bias)

    def _w8a8(self, xa: Tensor, bias: Optional[Tensor], fast: bool) -> Tensor:
        """prefill='w8a8': x -> e4m3 in 1 x 128 blocks (quantize_fp8_act), then
        y = (x_q * s_x) @ (w_q * s_w)^T with fp32 accumulation, rounded to x's
        dtype. `fast`: torch._scaled_mm (cuBLAS blockwise scaling, Hopper),
        the bias added to the rounded product (a second rounding); else the
        same product and bias over both operands dequantized to fp32, rounded
        once."""
        if fast:
            # cuBLAS's blockwise heuristic answered NOT_SUPPORTED for M = 17 on
            # the H200 (M = 64 ran): pad the batch to a multiple of 16 with zero
            # rows (scale 1, codes 0, output rows dropped).
            M = xa.shape[0]
            pad = -M % 16
            xp = torch.nn.functional.pad(xa, (0, 0, 0, pad)) if pad else xa
            x_q, x_s = _ops.quantize_fp8_act(xp, 128)  # x_s: [Mp, K/128], column-major
            # scale_b as [K/128, N] row-major: the layout cuBLAS takes (its
            # transposed view is rejected); a small copy, N*K/128 floats.
            y = torch._scaled_mm(x_q, self.weight_q.t(), scale_a=x_s,
                                 scale_b=self.weight_scale.t().contiguous(), out_dtype=xa.dtype)
            y = y[:M] if pad else y
            return y if bias is None else y + bias
        x_q, x_s = _ops.quantize_fp8_act(xa, 128)
        xf = _ops.dequantize_fp8_block(x_q, x_s.contiguous(), 128, torch.float32)
        wf = _ops.dequantize_fp8_block(self.weight_q, self.weight_scale, 128, torch.float32)
        y = torch.nn.functional.linear(xf, wf, None if bias is None else bias.float())
        return y.to(xa.dtype)

    def _apply(self, fn, recurse=True):
        """Module.half() / .bfloat16() / .float() / .to(dtype) convert every floating-point buffer,
        which turned the e4m3 codes and the fp32 scales of a quantized layer into other numbers
        (the ops then refused them; `quantize_model(m).half()` broke every layer). Here the stored
        weight keeps its dtype and only moves device. What follows a cast to float16 / bfloat16 is
        the layer dtype: the bias, and the dtype an fp32 input is cast to for the 16-bit kernels
        (int8 layers also follow float32); an nvfp4 layer in a decode order takes the new dtype's.
        sparse24 keeps its dtype (its values are the stored weight; a bf16 -> fp16 cast could
        overflow). Device moves (.to(device), .cuda(), .cpu()) move everything, as before; an
        nvfp4_layout="auto" layer then takes the layout of its new device and dtype."""
        before = {k: v for k, v in self._buffers.items() if v is not None}
        dev = next(iter(before.values())).device
        new_dt = fn(torch.empty(0, dtype=self.dtype, device=dev)).dtype
        super()._apply(fn, recurse)
        follows = (torch.float16, torch.bfloat16) + ((torch.float32,) if self.format in ("int8", "int8_sparse24") else ())
        target = new_dt if self.format != "sparse24" and new_dt in follows else self.dtype
        for name, old in before.items():
            cur = self._buffers[name]
            want = target if name == "bias" else old.dtype
            if cur.dtype != want:
                self._buffers[name] = old.to(device=cur.device, dtype=want)
        if self.format == "nvfp4":
            if self.nvfp4_auto:
                want = _auto_layout(target, self._buffers["weight_packed"].device)
            elif self.nvfp4_layout in _DTYPE_LAYOUTS[target]:
                want = self.nvfp4_layout  # a pinned layout the new dtype reads stays
            else:  # a pinned decode order takes the new dtype's
                want = _DECODE_LAYOUT[target] if self.nvfp4_layout else 0
            if want != self.nvfp4_layout:
                p0 = self._packed_layout0()
                self.nvfp4_layout = want
                self._buffers["weight_packed"] = self._packed_in_layout(p0)
        self.dtype = target
        self._fence_weights()  # the copies above (a device move or a relayout)
        return self

    def extra_repr(self) -> str:
        extra = f", block_size={self.block_size}" if self.format == "fp8_block" else ""
        extra += ", prefill=w8a8" if self.prefill == "w8a8" else ""
        extra += f", nvfp4_layout={self.nvfp4_layout}" if self.nvfp4_layout else ""
        extra += ", fp8_tiled=True" if self.fp8_tiled else ""
        extra += ", static_weights=True" if self._static_weights else ""
        act = "" if self.format not in ("int8", "int8_sparse24") else f", act={'sym' if self.act_symmetric else 'asym'}"
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"format={self.format}{extra}{act}")


# The decode order of each activation dtype (csrc/nvfp4/nvfp4_layout.h), nvfp4_layout "auto" /
# "decode". bf16: layout 3 (layout 1's decode on adjacent codes) since 2026-12-05j: its mma / wgmma
# GEMVs time as layout 1's or better and the direct GEMV runs where it wins (docs/nvfp4_gemv.md
# 30: the fused Llama-3-8B layer on an H100, us, layout 1 / 3: M = 1 58.1 / 56.6, M = 8 70.6 / 66.2).
_DECODE_LAYOUT = {torch.bfloat16: 3, torch.float16: 2}
# Every decode order the kernels read with x of that dtype.
_DTYPE_LAYOUTS = {torch.bfloat16: (1, 3), torch.float16: (2,), torch.float32: ()}


def _check_fp8_tiled_layer(format: str, block_size: int, in_features: int, out_features: int,
                           prefill: str) -> None:
    """QuantLinear's fp8_tiled=True: an fp8_block layer of whole 16-row tiles and 64-wide pieces of
    one scale block (fp8_block_tile's and the tiled GEMVs' conditions), without prefill="w8a8"
    (torch._scaled_mm reads rows: a copy of the weight per prefill call)."""
    if format != "fp8_block":
        raise ValueError(f"QuantLinear: fp8_tiled=True is for format 'fp8_block', got {format!r}")
    if out_features % 16 or in_features % 64 or block_size % 64:
        raise ValueError("QuantLinear: fp8_tiled=True needs out_features % 16 == 0, in_features % 64 == 0 and "
                         f"block_size % 64 == 0, got out_features={out_features}, in_features={in_features}, "
                         f"block_size={block_size}")
    if prefill == "w8a8":
        raise ValueError("QuantLinear: fp8_tiled=True keeps the weight in the decode GEMVs' order; prefill='w8a8' "
                         "(torch._scaled_mm) reads rows. Use one or the other")


def fp8_tiled_ok(format: str, block_size: int, in_features: int, out_features: int, prefill: str) -> bool:
    """Whether a layer can take fp8_tiled=True (_check_fp8_tiled_layer passes)."""
    try:
        _check_fp8_tiled_layer(format, block_size, in_features, out_features, prefill)
    except ValueError:
        return False
    return True


def _reads_stored_orders(device: torch.device) -> bool:
    """Whether the kernels on `device` read the layer's stored orders: the CPU and CUDA sm_80+. For
    nvfp4, layouts 1 / 2 / 3 (the CPU kernel a chunk at a time through a table; the CUDA mma / wgmma
    / direct kernels; the sm_75 kernels read layout 0 only); for fp8_block, the tiled weight (the CPU
    untiles it; the direct, ring and sm_90 wgmma GEMVs' tiled forms; sm_75's fma GEMV reads rows)."""
    return device.type != "cuda" or torch.cuda.get_device_capability(device)[0] >= 8


def _auto_layout(dtype: torch.dtype, device: torch.device) -> int:
    """nvfp4_layout="auto": the dtype's decode order on a CUDA device whose kernels read it (where
    it saves the decode ALU work, docs/nvfp4_gemv.md 23), layout 0 elsewhere (the CPU kernel would
    convert every chunk back; meta tensors hold nothing)."""
    if device.type == "cuda" and _reads_stored_orders(device):
        return _DECODE_LAYOUT.get(dtype, 0)
    return 0


def _resolve_nvfp4_layout(layout: Union[int, str], format: str, dtype: torch.dtype, device: torch.device) -> int:
    """QuantLinear's nvfp4_layout: "auto" (_auto_layout on `device`); "decode" (the layer dtype's
    decode order, 0 for float32); 0; or 1 / 3 (bf16) / 2 (fp16), which must match an nvfp4 layer of
    that dtype. Formats other than nvfp4 take "auto", "decode" and 0 as 0."""
    if isinstance(layout, str) and layout in ("auto", "decode"):
        if format != "nvfp4":
            return 0
        return _auto_layout(dtype, device) if layout == "auto" else _DECODE_LAYOUT.get(dtype, 0)
    if not isinstance(layout, int) or isinstance(layout, bool) or layout not in (0, 1, 2, 3):
        raise ValueError(f"QuantLinear: nvfp4_layout must be 'auto', 'decode', 0, 1, 2 or 3, got {layout!r}")
    if layout and (format != "nvfp4" or layout not in _DTYPE_LAYOUTS.get(dtype, ())):
        bf16 = layout != 2
        raise ValueError(f"QuantLinear: nvfp4_layout={layout} (a {'bf16' if bf16 else 'fp16'} decode "
                         f"order) is for format 'nvfp4' with dtype {'bfloat16' if bf16 else 'float16'}, "
                         f"got format={format!r}, dtype={dtype}")
    return layout


def _storage_dtype_error(module: "QuantLinear", name: str, t: Tensor) -> Optional[str]:
    """Why tensor t cannot be copied into buffer `name` (None if it can): buffers that hold codes or
    bytes take their own dtype only; float buffers any float dtype wider than a byte; the int32
    column sums any integer dtype."""
    buf = getattr(module, name)
    if t.dtype == buf.dtype:
        return None
    if buf.dtype.is_floating_point and buf.dtype.itemsize > 1 and t.dtype.is_floating_point and t.dtype.itemsize > 1:
        return None
    if name == "weight_colsum" and not t.dtype.is_floating_point and t.dtype != torch.bool:
        return None
    hint = f" (if these are the same bytes, pass t.view({buf.dtype}))" if buf.dtype.itemsize == 1 and t.dtype.itemsize == 1 else ""
    return f"{name} must be {buf.dtype}, got {t.dtype}{hint}"


def _copy_checked(module: "QuantLinear", name: str, t: Tensor, src: str) -> None:
    """buffer.copy_(t) without its conversions: the same shape (copy_ would broadcast a [N, 1] scale
    over every block) and a dtype _storage_dtype_error accepts (copy_ converts by value)."""
    buf = getattr(module, name)
    if tuple(t.shape) != tuple(buf.shape):
        raise ValueError(f"QuantLinear.{src}: {name} must have shape {tuple(buf.shape)}, got {tuple(t.shape)}")
    why = _storage_dtype_error(module, name, t)
    if why is not None:
        raise TypeError(f"QuantLinear.{src}: {why}")
    buf.copy_(t)


def _check_storage_dtypes(module: QuantLinear, state_dict, prefix: str, local_metadata, strict,
                          missing_keys, unexpected_keys, error_msgs) -> None:
    """load_state_dict pre-hook: the buffers that hold codes or bytes (int8 / e4m3 weights, packed
    nibbles, e4m3 block scales, 2:4 positions, int8 2:4 values) take a tensor of their own dtype
    only. load_state_dict would otherwise convert by value: uint8 bytes of an fp8 checkpoint
    copied into a float8_e4m3fn buffer become different weights, silently. Float scales, bias and
    sparse24's float values convert as nn.Linear's parameters do; the int32 column sums take
    any integer dtype."""
    for name, buf in module.named_buffers(recurse=False):
        t = state_dict.get(prefix + name)
        why = _storage_dtype_error(module, name, t) if isinstance(t, Tensor) else None
        if why is not None:
            raise RuntimeError(f"QuantLinear ({module.format}): {prefix}{why}")
        if isinstance(t, Tensor) and t.shape == buf.shape and (t.dtype != buf.dtype or not t.is_contiguous()):
            # what the copy into the buffer would do, done here so that assign=True (which takes
            # the tensor itself) gets the dtype and the dense layout the kernels need
            state_dict[prefix + name] = t.to(buf.dtype).contiguous()


def _fence_after_load(module: QuantLinear, incompatible_keys) -> None:
    """load_state_dict post-hook: the copies into the buffers ordered before any later GEMV."""
    module._fence_weights()


def _fp8_to_rows(module: QuantLinear, state_dict, prefix: str, local_metadata) -> None:
    """state_dict post-hook of fp8_tiled layers: weight_q and weight_scale saved row-major."""
    kq, ks = prefix + "weight_q", prefix + "weight_scale"
    if kq in state_dict and ks in state_dict:
        state_dict[kq], state_dict[ks] = _ops.fp8_block_tile(state_dict[kq], state_dict[ks], True)


def _fp8_from_rows(module: QuantLinear, state_dict, prefix: str, local_metadata, strict,
                   missing_keys, unexpected_keys, error_msgs) -> None:
    """load_state_dict pre-hook of fp8_tiled layers: row-major weight_q and weight_scale tiled before
    they are copied in (after _check_storage_dtypes; both needed, of the buffers' shapes, else left
    to load_state_dict's own errors)."""
    kq, ks = prefix + "weight_q", prefix + "weight_scale"
    tq, ts = state_dict.get(kq), state_dict.get(ks)
    if (isinstance(tq, Tensor) and isinstance(ts, Tensor) and tq.shape == module.weight_q.shape and
            ts.shape == module.weight_scale.shape and not tq.is_meta and not ts.is_meta):
        state_dict[kq], state_dict[ks] = _ops.fp8_block_tile(tq.contiguous(), ts.contiguous())


def _packed_to_layout0(module: QuantLinear, state_dict, prefix: str, local_metadata) -> None:
    """state_dict post-hook of nvfp4 layers: weight_packed saved in the formats.md packing."""
    key = prefix + "weight_packed"
    if key in state_dict and module.nvfp4_layout:
        state_dict[key] = _ops.nvfp4_relayout(state_dict[key], module.nvfp4_layout, True)


def _packed_from_layout0(module: QuantLinear, state_dict, prefix: str, local_metadata, strict,
                         missing_keys, unexpected_keys, error_msgs) -> None:
    """load_state_dict pre-hook of nvfp4 layers: a formats.md weight_packed converted to the layer's
    layout before it is copied in (registered after _check_storage_dtypes, which refuses any
    dtype but uint8; a wrong shape is left to load_state_dict's error)."""
    key = prefix + "weight_packed"
    t = state_dict.get(key)
    if isinstance(t, Tensor) and t.shape == module.weight_packed.shape:
        state_dict[key] = module._packed_in_layout(t)
