"""NVFP4: packed E2M1 codes, an E4M3 scale per 16 along K, one fp32 global scale.

Codes are s<<3 | e<<1 | m with magnitudes {0, .5, 1, 1.5, 2, 3, 4, 6}; code 8
is -0. Two codes per byte, element 2j in the LOW nibble (the order of
torch.float4_e2m1fn_x2, compressed-tensors, ModelOpt and ONNX Runtime).
w = e2m1 * float(block_scale) * global_scale.

Quantize: global = amax / (448 * 6) (1 for an all-zero tensor);
block_scale = e4m3(min(block_amax / 6 / global, 448));
q = e2m1_rne(clamp(w / (float(block_scale) * global), -6, 6)). A block whose
scale rounds to 0 (all zero, or too small for e4m3) stores codes 0. The sign
bit is kept as IEEE rounding keeps it: a negative value that rounds to zero
encodes as -0 (code 8), as ml_dtypes' float4_e2m1fn does.
"""

from typing import Tuple

import torch

from torchquant.formats._common import check_2d_float, check_finite

E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)
E2M1_MAX = 6.0
BLOCK = 16


def e2m1_encode(v: torch.Tensor) -> torch.Tensor:
    """Round-to-nearest-even to E2M1 codes (uint8 0..15). Input already within [-6, 6]."""
    a = v.abs()
    # Each step is one code boundary; ties go to the even code, so a midpoint
    # between an odd and an even code uses >= or > accordingly.
    code = (
        (a > 0.25).to(torch.uint8)
        + (a >= 0.75)
        + (a > 1.25)
        + (a >= 1.75)
        + (a > 2.5)
        + (a >= 3.5)
        + (a > 5.0)
    ).to(torch.uint8)
    sign = torch.signbit(v).to(torch.uint8) << 3
    return code | sign


def e2m1_decode(codes: torch.Tensor) -> torch.Tensor:
    table = torch.tensor(E2M1_VALUES, dtype=torch.float32, device=codes.device)
    return table[codes.long()]


def pack_e2m1(codes: torch.Tensor) -> torch.Tensor:
    """[N, K] codes -> [N, K/2] bytes, even k in the low nibble."""
    c = codes.to(torch.uint8)
    return c[:, 0::2] | (c[:, 1::2] << 4)


def unpack_e2m1(packed: torch.Tensor) -> torch.Tensor:
    lo = packed & 0x0F
    hi = packed >> 4
    return torch.stack((lo, hi), dim=-1).reshape(packed.shape[0], -1)


def quantize_nvfp4(w: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    check_2d_float(w, "quantize_nvfp4")
    N, K = w.shape
    if K % BLOCK:
        raise ValueError(f"quantize_nvfp4: K must be a multiple of 16, got {K}")
    check_finite(w, "quantize_nvfp4", "w")
    wf = w.float()
    amax = wf.abs().amax()
    g = amax / (448.0 * 6.0)
    g = torch.where(g > 0, g, torch.ones_like(g))  # all zero, or underflow
    bamax = wf.view(N, K // BLOCK, BLOCK).abs().amax(dim=2)
    bs = torch.clamp(bamax / 6.0 / g, max=448.0).to(torch.float8_e4m3fn)
    denom = (bs.float() * g).repeat_interleave(BLOCK, dim=1)
    safe = torch.where(denom > 0, denom, torch.ones_like(denom))
    scaled = torch.clamp(wf / safe, -E2M1_MAX, E2M1_MAX)
    codes = torch.where(denom > 0, e2m1_encode(scaled), torch.zeros_like(scaled, dtype=torch.uint8))
    return pack_e2m1(codes), bs, g.to(torch.float32)


def dequantize_nvfp4(w_packed: torch.Tensor, scale: torch.Tensor, global_scale: torch.Tensor, out_dtype=torch.float32) -> torch.Tensor:
    work = torch.float64 if out_dtype == torch.float64 else torch.float32
    vals = e2m1_decode(unpack_e2m1(w_packed)).to(work)
    full = scale.to(work).repeat_interleave(BLOCK, dim=1)  # e2m1 * e4m3 is exact in either
    return (vals * full * global_scale.to(work).reshape(())).to(out_dtype)


# ------------------------------------------------------------------ layouts --
# The decode orders (csrc/nvfp4/nvfp4_layout.h, docs/nvfp4_gemv.md 23): the bits of every 32-bit
# little-endian word of a row permuted so that each of the GEMV's four 16-bit pairs comes out of
# one mover and one mask. A pair's target bits are the magnitude bits and the sign of its two
# halves; each target bit q comes from the bit the pair's mover brings onto q.
#
# Layout 1 (bf16): pairs h_p = (code p, code p + 4), magnitude at 6..8 / 22..24, sign 15 / 31.
# Movers: the identity (p = 0), a left rotation by 10 (p = 1) or 13 (p = 2), and for p = 3 the
# product of the word masked to L1_MUL_SOURCE with 2^2 + 2^7 + 2^12 (q from the one bit q - a,
# a in L1_MUL_SHIFTS, of the mask).
# Layout 3 (bf16, the direct GEMV): layout 1 on a word whose codes stand in the order
# (c0, c2, c4, c6, c1, c3, c5, c7), so its pairs are adjacent codes, h_p = (code 2p, code 2p + 1).
# Layout 2 (fp16): pairs h0 = (n0, n2), h1 = (n4, n6), h2 = (n1, n3), h3 = (n5, n7), magnitude
# at 9..11 / 25..27, sign 15 / 31. Movers: the identity, a left shift by 3, and two masked
# products, L2_MUL_A (p = 2) and L2_MUL_B (p = 3).
L1_MUL_SOURCE = (0, 1, 3, 4, 16, 17, 19, 20)
L1_MUL_SHIFTS = (2, 7, 12)
L2_MUL_A = ((0, 1, 2, 14, 16, 17, 18, 30), (1, 9))
L2_MUL_B = ((3, 4, 5, 13, 19, 20, 21, 29), (2, 6))


def _masked_product_source(q: int, source, shifts) -> int:
    (src,) = [q - a for a in shifts if q - a in source]
    return src


def _l1_source_bit(p: int, q: int) -> int:
    if p == 0:
        return q
    if p in (1, 2):
        return (q - (10 if p == 1 else 13)) % 32
    return _masked_product_source(q, L1_MUL_SOURCE, L1_MUL_SHIFTS)


def _l2_source_bit(p: int, q: int) -> int:
    if p == 0:
        return q
    if p == 1:
        return q - 3
    return _masked_product_source(q, *(L2_MUL_A if p == 2 else L2_MUL_B))


def layout_bit_map(layout: int) -> Tuple[int, ...]:
    """Position in a word of `layout` (1, 2 or 3) of each layout-0 bit b (code b // 4, field b % 4:
    m, e0, e1, s). Layout 3 is layout 1 with code j where layout 1 keeps code j // 2 + 4 (j % 2),
    so its pairs are h_p = (code 2p, code 2p + 1)."""
    out = []
    for b in range(32):
        code, field = divmod(b, 4)
        if layout in (1, 3):
            c1 = code if layout == 1 else code // 2 + 4 * (code % 2)  # the code's place in layout 1
            q = (15 if field == 3 else 6 + field) + 16 * (c1 // 4)
            out.append(_l1_source_bit(c1 % 4, q))
        elif layout == 2:
            q = (15 if field == 3 else 9 + field) + 16 * ((code // 2) % 2)
            out.append(_l2_source_bit(2 * (code % 2) + code // 4, q))
        else:
            raise ValueError(f"layout_bit_map: layout must be 1, 2 or 3, got {layout}")
    return tuple(out)


def relayout_nvfp4(w_packed: torch.Tensor, layout: int, inverse: bool = False) -> torch.Tensor:
    """The packed weight [N, K/2] in word layout `layout` (0: as packed; 1, 2, 3: above), or from
    it back to layout 0 with inverse. Exact both ways."""
    if layout not in (0, 1, 2, 3):
        raise ValueError(f"relayout_nvfp4: layout must be 0, 1, 2 or 3, got {layout}")
    if w_packed.dtype != torch.uint8 or w_packed.dim() != 2 or w_packed.shape[1] % 8:
        raise ValueError("relayout_nvfp4: w_packed must be uint8 [N, K/2] with K a multiple of 16")
    if layout == 0:
        return w_packed.clone()
    words = w_packed.reshape(-1, 4).to(torch.int64)
    words = words[:, 0] | (words[:, 1] << 8) | (words[:, 2] << 16) | (words[:, 3] << 24)
    out = torch.zeros_like(words)
    for b, pos in enumerate(layout_bit_map(layout)):
        src, dst = (pos, b) if inverse else (b, pos)
        out |= ((words >> src) & 1) << dst
    by = torch.stack([(out >> (8 * i)) & 0xFF for i in range(4)], dim=1).to(torch.uint8)
    return by.reshape(w_packed.shape)
