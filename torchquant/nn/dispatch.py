"""Which kernel a QuantLinear runs, by format, device capability and M.

This is the one place the Python layer decides; the ops themselves pick
their internal variant (mma vs fma, tiles) in csrc (see each op's
choose_*_kernel). Every bucket says why.
"""

from __future__ import annotations

import torch

# Decode GEMV kernels stream the weight once for up to 16 activation rows (one
# mma n-tile pair); past that the weight is re-read per 16-row tile, and a
# tensor-core GEMM over a dequantized weight wins once M is large enough to
# be compute-bound. 16 matches the kernels' M tile.
GEMV_MAX_M = 16


# torch._scaled_mm's blockwise scaling (1 x 128 activation blocks with 1 x 128
# weight blocks, cuBLAS >= 12.9) runs on Hopper only.
W8A8_CAPABILITY_MAJOR = 9


def choose_path(fmt: str, m: int, device: torch.device, prefill: str = "dequant") -> str:
    """Returns one of: "cpu", "gemv", "int8_mma", "dequant_mm", "w8a8_mm", "w8a8_emulated".

    prefill="w8a8" (fp8_block only, chosen when the layer is built) quantizes
    the activation to e4m3 in 1 x 128 blocks for M > GEMV_MAX_M and runs an
    FP8 tensor-core GEMM; where that GEMM is not available (CPU, a GPU other
    than Hopper) the same numerics are emulated in fp32."""
    if fmt not in ("int8", "fp8_block", "nvfp4", "sparse24", "int8_sparse24"):
        raise ValueError(f"unknown format {fmt!r}")
    if prefill not in ("dequant", "w8a8"):
        raise ValueError(f"prefill must be 'dequant' or 'w8a8', got {prefill!r}")
    w8a8 = fmt == "fp8_block" and prefill == "w8a8" and m > GEMV_MAX_M
    if device.type != "cuda":
        # CPU: every op has a C++ kernel that handles any M (sparse24_gemv and
        # sparse24_int8_matmul included), so nothing is dequantized.
        return "w8a8_emulated" if w8a8 else "cpu"
    if w8a8:
        # Measured on the H200 (benchmarks/micro/prefill_fp8_paths.py, M = 2048,
        # 28672x8192): _scaled_mm 913 us + activation quantization vs bf16
        # F.linear 1205 us and dequantize + F.linear 1414 us.
        major = torch.cuda.get_device_capability(device)[0]
        return "w8a8_mm" if major == W8A8_CAPABILITY_MAJOR else "w8a8_emulated"
    if fmt in ("int8", "int8_sparse24"):
        # int8_matmul dispatches gemv (M <= 16) vs tensor-core tiles itself;
        # both are W8A8 on the int8 datapath, so the layer always calls it.
        # sparse24_int8_matmul likewise picks mma.sp (half the MACs of the
        # dense weight) or its CUDA-core path itself, for any M.
        return "int8_mma"
    if m <= GEMV_MAX_M:
        # fp8_block / nvfp4 / sparse24 decode: memory-bound; the fused GEMV
        # reads 1.03 (fp8), 0.56 (nvfp4) or 1.125 (2:4 values + meta) bytes
        # per dense weight element instead of bf16's 2.
        return "gemv"
    # Prefill: compute-bound; widen (or decompress, for 2:4) the weight to the
    # activation dtype once per call and use cuBLAS tensor cores (bf16/fp16
    # mma at full rate).
    return "dequant_mm"
