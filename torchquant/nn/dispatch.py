"""Which kernel a QuantLinear runs, by format, device capability and M.

This is the one place the Python layer decides; the ops themselves pick
their internal variant (mma vs fma, tiles) in csrc (see each op's
choose_*_kernel). Every bucket says why.
"""

from __future__ import annotations

import torch

# Decode GEMV kernels stream the weight once for up to 16 activation rows (one
# mma n-tile pair, the kernels' M tile); past that they re-read the weight
# once per 16-row tile. The fp8 w8a8 prefill takes over above this M.
GEMV_MAX_M = 16

# Above GEMV_MAX_M the alternative is to widen the whole weight to bf16 and
# call cuBLAS: that writes and re-reads 2 bytes per weight element (plus the
# quantized read), ~4.5 bytes against the GEMV's 0.56-1.13 bytes per 16-row
# tile, until M is large enough for the GEMM to be compute-bound. Measured on
# the H200 at M = 64 (benchmarks/results/h200/2026-12-01_0541, cold L2, us,
# GEMV / dequantize + cuBLAS): fp8_block 4096x4096 26.4 / 26.5, 14336x4096
# 77.7 / 88.7, 28672x8192 286.8 / 321.6, 128256x4096 613.8 / 721.4; nvfp4
# 23.0 / 23.3, 60.9 / 78.8, 228.9 / 282.4, 455.0 / 632.0; the Llama-3-8B layer
# fused as engines run it: sparse24 321.4 (GEMV) / 1001.6 (decompress24, which
# also validates with a host sync). At M = 2048 dequantize + cuBLAS wins by 4x
# (fp8 28672x8192: GEMV 9638, dequantize + cuBLAS 1680 us). The GEMV time grows
# with ceil(M / 16) while the dequantize path's is flat at these M, so the
# GEMV also wins below 64. Since 2026-12-01 the ops themselves switch from the
# GEMV to a tiled dequantizing GEMM above M = 48 ("tile", docs/tile_gemm.md):
# M = 64, us, tile / GEMV / dequantize + cuBLAS (results/h200/2026-12-01_1115):
# fp8_block 28672x8192 236.1 / 284.5 / 321.8, 14336x4096 63.7 / 77.8 / 88.9;
# nvfp4 197.8 / 232.5 / 283.5, 53.0 / 61.6 / 78.8. At M = 96 and 128
# dequantize + cuBLAS wins on every measured shape (fp8 28672x8192 M = 128:
# 331.0 vs tile 455.2), so above 64 the layer keeps the dequantize path.
LAYER_GEMV_MAX_M = 64

# On the CPU the C++ GEMV kernels run ~2-3x slower than torch's fp32 GEMM
# (oneDNN / MKL) per multiply-add once M is large, and widening the weight to
# fp32 costs a fixed ~2-4 ns per weight element (a fresh buffer). Measured on a
# 2-core x86-64 machine with AVX2 + F16C (torch 2.14 CPU build, ms, the op vs
# its dequantize + F.linear in fp32; fp8_block (bs 128) / nvfp4 / sparse24):
#   384x384    M = 64: 0.54/0.24, 0.50/0.28, 0.61/0.28    M = 128: 1.39/0.42, 0.99/0.46, 1.17/0.46
#   1536x384   M = 64: 2.17/0.92, 1.44/1.08, 1.76/1.06    M = 128: 4.22/1.64, 2.89/1.82, 3.56/1.85
#   4096x4096  M = 64: 75.3/63.5, 52.2/67.2, 62.5/87.3    M = 128: 151.0/84.0, 111.2/97.7, 123.5/108.5
# so M >= 128 takes the dequantize path (small layers win from ~M = 32 already,
# 4096x4096 only from M = 64 for fp8_block and M = 128 for the others).
# sparse24 after its AVX2 expansion (6a1645d; same machine, bf16, op / decompress24 + fp32
# F.linear): 384x384 M = 64 / 128 0.41 / 0.48, 0.86 / 0.64; 1536x384 1.53 / 1.68, 3.25 /
# 2.37; 4096x4096 42.3 / 86.7, 71.2 / 95.4, M = 256 145.2 / 133.7. The large layer now
# keeps the op to M = 128 where the small ones do not; one threshold for all stays.
CPU_DEQUANT_MIN_M = 128


# torch._scaled_mm's blockwise scaling (1 x 128 activation blocks with 1 x 128
# weight blocks, cuBLAS >= 12.9) runs on Hopper only.
W8A8_CAPABILITY_MAJOR = 9


# The 2:4 ops run a sparse-wgmma GEMM from this M on an sm_90 GPU when the
# sm_90a module is loaded and K % 128 == 0 (csrc/sparse/sparse24.cu,
# auto_takes_sparse_wgmma; since 2026-12-03d also below it where its decode
# tiles win). H200, 2026-12-01, us, 28672x8192 bf16: M = 256 wgmma 151.8
# against bf16 F.linear 195.8 (dense, no decompression), M = 2048 1049-1052
# against 1218-1430; so the sparse24 layer calls the op at every M there
# instead of decompress24 + cuBLAS.
SPARSE24_WGMMA_MIN_M = 64


def sm90a_op_runs(device: torch.device, op_name: str) -> bool:
    """True when the sm_90a-only op `op_name` can run on `device`: a compute capability 9.0 GPU
    and the torchquant._C_sm90a module loaded with that op."""
    if device.type != "cuda" or not torch.cuda.is_available():
        return False
    if torch.cuda.get_device_capability(device) != (9, 0):
        return False
    return hasattr(torch.ops.torchquant, op_name)


def sparse24_wgmma_runs(device: torch.device, k: int) -> bool:
    """True when sparse24_gemv's "auto" takes the sparse-wgmma GEMM at large M here."""
    return k > 0 and k % 128 == 0 and sm90a_op_runs(device, "_sparse24_gemm_sm90a")


# fp8_block on an sm_90 GPU with the sm_90a module: the dequantizing wgmma GEMM
# (csrc/dqgemm, torch.ops.torchquant._fp8_block_gemm_sm90a; the weight converted
# in registers to exactly the values dequantize_fp8_block gives in x's dtype, so
# the numerics of dequantize + F.linear) for every M past the GEMV's one 16-row
# pass up to FP8_WGMMA_SMALL_N_MAX_M, and beyond that for layers of at least
# FP8_WGMMA_MIN_N outputs. H200, 2026-12-01 (results/h200/2026-12-01_dq_wgmma,
# dq_ab3.csv), us, bf16 x, bs 128, wgmma / GEMV tile / dequantize + F.linear / bf16:
#   28672x8192   M = 64: 116 / 239 / 326 / 120    M = 512: 443 / - / 560 / 354
#                M = 2048: 1633 / - / 1690 / 1435
#   14336x4096   M = 64: 32.3 / 64.1 / 89.0 / 34.8  M = 1024: 226 / - / 222 / 180
#   4096x14336   M = 64: 32.6 / 59.4 / 91.3 / 36.7  M = 1024: 270 / - / 219 / 159
#   4096x4096    M = 64: 14.9 / 22.9 / 26.4 / 12.5  M = 1024: 77.7 / - / 65.7 / 50.7
#   6144x4096    M = 512: 76.4 / - / 63.9 / 37.0
#   1024x4096    M = 64: 10.4 / 12.1 / 12.3 / 8.2   M = 2048: 39.6 / - / 30.9 / 26.2
# Past M = 256 the layers with few 128-feature tiles lose to cuBLAS after the
# dequantization (the kernel is bound by shared-memory / L1 traffic, see
# docs/fp8_wgmma.md); the large ones win or tie at every M measured.
FP8_WGMMA_MIN_M = GEMV_MAX_M + 1
FP8_WGMMA_SMALL_N_MAX_M = 256
FP8_WGMMA_MIN_N = 12288


def fp8_wgmma_runs(device: torch.device) -> bool:
    """True when the dequantizing fp8_block wgmma GEMM can run on this device."""
    return sm90a_op_runs(device, "_fp8_block_gemm_sm90a")


# nvfp4 on an sm_90 GPU with the sm_90a module: the same wgmma GEMM with the packed
# E2M1 weight decoded in registers (torch.ops.torchquant._nvfp4_gemm_sm90a; nvfp4_gemv's
# contract: every product exact, the global scale on the fp32 sum), K % 64 == 0. H200,
# 2026-12-02 (results/h200/2026-12-02_nvfp4_wgmma), us, bf16 x, wgmma / GEMV (the op's
# auto: mma GEMV to M = 48, tile above) / dequantize + F.linear / bf16:
#   28672x8192   M = 17: 122.1 / 118.5 / 281.0 / 110.9  M = 48: 123.5 / 178.5 / 283.9 / 119.2
#                M = 64: 123.8 / 184.6 / 284.1 / 119.7  M = 768: 602.8 / - / 634.8 / 548.0
#                M = 1024: 753.3 / - / 785.5 / 691.2  M = 1536: 1221.1 / - / 1155.3 / 1024.8
#   14336x4096   M = 17: 33.2 / 34.6 / 77.4 / 32.5     M = 768: 167.1 / - / 171.0 / 127.1
#                M = 1024: 221.8 / - / 212.7 / 166.7
#   4096x14336   M = 17: 32.5 / 34.0 / 79.9 / 33.3     M = 256: 70.5 / - / 93.5 / 50.1
#                M = 512: 129.7 / - / 124.2 / 81.9
#   4096x4096    M = 17: 13.7 / 14.7 / 24.7 / 14.2     M = 512: 39.0 / - / 38.4 / 26.4
#   6144x4096    M = 17: 20.3 / 20.6 / 33.3 / 16.9     M = 48: 21.2 / 33.2 / 33.4 / 17.2
# so every layer from M = 17 to 256 (the one loss: 28672x8192 at M = 17..32, 3 % behind
# the GEMV's two 16-row passes), and layers of at least NVFP4_WGMMA_MIN_N outputs up to
# NVFP4_WGMMA_MAX_M (the 14336-output layer loses from M = 1024, the 28672 one from 1536).
NVFP4_WGMMA_MIN_M = GEMV_MAX_M + 1
NVFP4_WGMMA_SMALL_N_MAX_M = 256
NVFP4_WGMMA_MIN_N = 12288
NVFP4_WGMMA_MAX_M = 768


def nvfp4_wgmma_runs(device: torch.device, k: int) -> bool:
    """True when the nvfp4 wgmma GEMM can run on this device for in_features k."""
    return k > 0 and k % 64 == 0 and sm90a_op_runs(device, "_nvfp4_gemm_sm90a")


# Below that GEMM, on the same GPUs: nvfp4_gemv's Hopper decode GEMV (path "wgmma", 16-token
# tiles, K % 256 == 0), which the op's own "auto" takes from M = 5 to NVFP4_GEMV_WGMMA_MAX_M.
# Up to two token tiles it beats the GEMM on every layer measured (H200, 2026-12-04f call 2,
# results/h200/2026-12-04f_nvfp4_wgmma, bf16, us, the op's auto before (mma GEMV) / wgmma GEMV /
# wgmma GEMM): 28672x8192 M = 17 111.6 / 90.8 / 124.0, M = 32 113.0 / 93.7 / 125.0;
# 14336x4096 M = 17 32.7 / 26.6 / 33.2, M = 32 33.2 / 26.3 / 32.9; 4096x14336 M = 32 33.2 /
# 28.3 / 32.8; 4096x4096 M = 32 14.4 / 11.9 / 13.9; with three (M = 48) the GEMM wins
# (124.6 / 136.3 on 28672x8192, 33.2 / 36.0 on 14336x4096). So QuantLinear leaves M <= 32 to
# the op ("gemv") where that GEMV runs.
NVFP4_GEMV_WGMMA_MAX_M = 32  # = kWgmmaMaxM in csrc/nvfp4/nvfp4_gemv.cu (test_gemv_auto_takes_wgmma_from_m5)


def nvfp4_gemv_wgmma_runs(device: torch.device, k: int) -> bool:
    """True when nvfp4_gemv's Hopper decode GEMV can run on this device for in_features k."""
    return k > 0 and k % 256 == 0 and sm90a_op_runs(device, "_nvfp4_gemv_sm90a")


# The two wgmma GEMMs' rules: (min M, every layer up to this M, layers of at least this many
# outputs, ... up to this M (None: any)).
_DQ_WGMMA_RULES = {
    "fp8_block": (FP8_WGMMA_MIN_M, FP8_WGMMA_SMALL_N_MAX_M, FP8_WGMMA_MIN_N, None),
    "nvfp4": (NVFP4_WGMMA_MIN_M, NVFP4_WGMMA_SMALL_N_MAX_M, NVFP4_WGMMA_MIN_N, NVFP4_WGMMA_MAX_M),
}


def dq_wgmma_pays(fmt: str, m: int, n: int, k: int, device: torch.device) -> bool:
    """True when QuantLinear's fp8_block / nvfp4 layer of n outputs and k inputs runs m rows
    through its wgmma GEMM (the measured rules above; n = 0, unknown: never)."""
    rule = _DQ_WGMMA_RULES.get(fmt)
    if rule is None or n <= 0:
        return False
    min_m, small_n_max_m, min_n, max_m = rule
    if m < min_m or not (m <= small_n_max_m or (n >= min_n and (max_m is None or m <= max_m))):
        return False
    if fmt == "nvfp4" and m <= NVFP4_GEMV_WGMMA_MAX_M and nvfp4_gemv_wgmma_runs(device, k):
        return False  # the op's decode GEMV on wgmma is faster up to two token tiles
    return fp8_wgmma_runs(device) if fmt == "fp8_block" else nvfp4_wgmma_runs(device, k)


def choose_path(fmt: str, m: int, device: torch.device, prefill: str = "dequant", k: int = 0, n: int = 0) -> str:
    """Returns one of: "cpu", "gemv", "int8_mma", "dequant_mm", "dq_wgmma", "w8a8_mm", "w8a8_emulated"
    ("dequant_mm" on the CPU: the weight widened to fp32 and torch's fp32 GEMM;
    "gemv": the format's op with its own "auto" dispatch). k: in_features (0 if
    unknown), which decides whether the sparse-wgmma GEMM can run; n: out_features
    (0 if unknown: the wgmma GEMM is not chosen), which decides whether the
    fp8_block / nvfp4 wgmma GEMM pays.

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
        # sparse24_int8_matmul included). From CPU_DEQUANT_MIN_M rows on, the
        # fp8_block / nvfp4 / sparse24 weight is widened to fp32 for torch's
        # GEMM instead (int8 keeps its exact integer kernel, as fast as fp32).
        if w8a8:
            return "w8a8_emulated"
        if fmt in ("fp8_block", "nvfp4", "sparse24") and m >= CPU_DEQUANT_MIN_M:
            return "dequant_mm"
        return "cpu"
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
    if fmt == "sparse24" and m >= SPARSE24_WGMMA_MIN_M and sparse24_wgmma_runs(device, k):
        # The op's own dispatch runs the Hopper sparse-wgmma GEMM (no host
        # sync, unlike decompress24: graph-capturable at every M).
        return "gemv"
    if dq_wgmma_pays(fmt, m, n, k, device):
        return "dq_wgmma"
    if m <= LAYER_GEMV_MAX_M:
        # fp8_block / nvfp4 / sparse24 decode: memory-bound; the fused GEMV
        # reads 1.03 (fp8), 0.56 (nvfp4) or 1.125 (2:4 values + meta) bytes
        # per dense weight element and 16-row tile instead of bf16's 2.
        return "gemv"
    # Prefill: compute-bound; widen (or decompress, for 2:4) the weight to the
    # activation dtype once per call and use cuBLAS tensor cores (bf16/fp16
    # mma at full rate).
    return "dequant_mm"
