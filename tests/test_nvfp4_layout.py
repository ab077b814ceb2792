"""nvfp4 word layouts 1, 2 and 3, the bf16 and fp16 decode orders and the bf16 order on adjacent
codes (csrc/nvfp4/nvfp4_layout.h, docs/nvfp4_gemv.md 23, 27).

(a) Each bit map is a permutation, and the CUDA kernels' decodes of a word in the layout (emulated
    here with Python integers: the expressions of decode_e2m1_bf16_l1 / decode_e2m1_f16_l2) give
    the same four pairs as the layout-0 decodes (decode_e2m1_bf16 / decode_e2m1_f16) for every
    code at every position and for random words, so the GEMVs' x permutation and everything after
    the decode stay valid; the decoding GEMM's per-lane read (bf16_l1_adjacent / f16_l2_adjacent)
    gives the bits of its layout-0 byte decode. Layout 3 through layout 1's decode gives the pairs
    (code 2p, code 2p + 1) that the direct GEMV hands the mma with x as loaded.
(b) nvfp4_relayout on CPU and CUDA equals the pure-torch formats.relayout_nvfp4 and round-trips.
(c) nvfp4_gemv with a layout gives the same bits as layout 0 (CPU here; every CUDA kernel form
    in test_nvfp4_cuda.py), and bad layouts raise.
(d) Layout 4 (nvfp4_tiles.h): nvfp4_relayout(w, 4) and nvfp4_relayout_scale(s, 4) put every
    byte where an independent reference (a loop over tiles, pieces and rows) puts it, round-trip,
    and nvfp4_gemv reads them to the same bits as layouts 0 and 3; bad shapes raise.
"""

import math
import random
import struct

import pytest
import torch

import torchquant  # noqa: F401
from torchquant import formats as F
from torchquant import ops

from conftest import HAS_CUDA

DEVICES = ["cpu"] + (["cuda"] if HAS_CUDA else [])
M32 = 0xFFFFFFFF
P = 0x81C081C0  # the bf16 pair bits: magnitude 6..8 / 22..24, sign 15 / 31


def _rotl(w, s):
    return ((w << s) | (w >> (32 - s))) & M32


def _decode_std(w):
    """decode_e2m1_bf16 (layout 0): h_p = (code p, code p + 4) as bf16 e2m1 * 2^-126."""
    v = w >> 8
    return [
        ((w & 0x000F000F) * 0x1040 & M32) & P,
        ((w & 0x00F000F0) * 0x0104 & M32) & P,
        ((v & 0x000F000F) * 0x1040 & M32) & P,
        ((v & 0x00F000F0) * 0x0104 & M32) & P,
    ]


def _decode_l1(w):
    """decode_e2m1_bf16_l1 (layout 1)."""
    return [w & P, _rotl(w, 10) & P, _rotl(w, 13) & P, ((w & 0x001B001B) * 0x1084 & M32) & P]


P16 = 0x8E008E00  # the fp16 pair bits: magnitude 9..11 / 25..27, sign 15 / 31


def _prmt(a, b, sel):
    by = [(a >> (8 * i)) & 0xFF for i in range(4)] + [(b >> (8 * i)) & 0xFF for i in range(4)]
    return sum(by[(sel >> (4 * i)) & 7] << (8 * i) for i in range(4))


def _decode_std16(w):
    """decode_e2m1_f16 (layout 0): h0 = (n0, n2), h1 = (n4, n6), h2 = (n1, n3), h3 = (n5, n7)."""
    e = (((w << 1) & 0x0E0E0E0E) | ((w << 4) & 0x80808080)) & M32
    o = ((w >> 3) & 0x0E0E0E0E) | (w & 0x80808080)
    return [_prmt(e, 0, 0x1404), _prmt(e, 0, 0x3424), _prmt(o, 0, 0x1404), _prmt(o, 0, 0x3424)]


def _decode_l2(w):
    """decode_e2m1_f16_l2 (layout 2)."""
    return [w & P16, (w << 3) & M32 & P16, ((w & 0x40074007) * 0x202 & M32) & P16,
            ((w & 0x20382038) * 0x44 & M32) & P16]


DECODES = {1: (_decode_l1, _decode_std), 2: (_decode_l2, _decode_std16)}


def _to_l1(w, bit_map):
    return sum(((w >> b) & 1) << pos for b, pos in enumerate(bit_map))


@pytest.mark.parametrize("layout", [1, 2, 3])
def test_bit_map_is_a_permutation(layout):
    assert sorted(F.layout_bit_map(layout)) == list(range(32))


@pytest.mark.parametrize("layout", [1, 2])
def test_layout_decode_gives_the_layout0_pairs(layout):
    bit_map = F.layout_bit_map(layout)
    dec, std = DECODES[layout]
    rng = random.Random(7)
    words = [v << (4 * j) for j in range(8) for v in range(16)]  # each code alone, every slot
    words += [rng.getrandbits(32) for _ in range(20000)] + [0, M32]
    for w in words:
        assert dec(_to_l1(w, bit_map)) == std(w), hex(w)


def _half_std(w, j):
    """Code j of a layout-0 word as layout 0's decode gives it: bf16 e2m1 * 2^-126 (16 bits)."""
    return _decode_std(w)[j % 4] >> (16 * (j // 4)) & 0xFFFF


def test_layout3_decode_gives_adjacent_pairs():
    """decode_e2m1_bf16_l1 on a layout-3 word: h_p = (code 2p, code 2p + 1), each half the bits
    layout 0's decode gives that code (so the direct GEMV's x, loaded in natural order, is the mma's
    B fragment), for each code alone at every slot and random words."""
    bit_map = F.layout_bit_map(3)
    rng = random.Random(5)
    words = [v << (4 * j) for j in range(8) for v in range(16)]
    words += [rng.getrandbits(32) for _ in range(20000)] + [0, M32]
    for w in words:
        want = [_half_std(w, 2 * p) | (_half_std(w, 2 * p + 1) << 16) for p in range(4)]
        assert _decode_l1(_to_l1(w, bit_map)) == want, hex(w)


def test_layout3_map_is_layout1_of_shuffled_codes():
    """nvfp4_layout.h's l3_bit_of: code j of layout 3 sits where layout 1 keeps code j // 2 + 4 (j % 2)."""
    l1, l3 = F.layout_bit_map(1), F.layout_bit_map(3)
    for b in range(32):
        j, f = divmod(b, 4)
        assert l3[b] == l1[4 * (j // 2 + 4 * (j % 2)) + f]


def test_layout0_decodes_are_e2m1_values():
    """The layout-0 pairs hold e2m1 * 2^-126 (bf16) and e2m1 * 2^-14 (fp16) of the right codes."""
    import numpy as np

    for j in range(8):
        for v in range(16):
            w = v << (4 * j)
            h16 = _decode_std16(w)[2 * (j % 2) + j // 4] >> (16 * ((j // 2) % 2)) & 0xFFFF
            val = float(np.array([h16], dtype=np.uint16).view(np.float16)[0])
            want = F.E2M1_VALUES[v] * 2.0**-14
            assert val == want and math.copysign(1, val) == math.copysign(1, want), (j, v, h16)
    # and the standard decode is the bf16 value e2m1 * 2^-126 of codes p and p + 4
    for j in range(8):
        for v in range(16):
            h = _decode_std(v << (4 * j))[j % 4] >> (16 * (j // 4)) & 0xFFFF
            val = struct.unpack("<f", struct.pack("<I", h << 16))[0]  # bf16 = fp32's top half
            want = F.E2M1_VALUES[v] * 2.0**-126
            assert val == want and math.copysign(1, val) == math.copysign(1, want), (j, v, h)


def _e2m1x2_decode_bf16(byte):
    """The decoding wgmma GEMM's layout-0 read of one byte (dq_gemm_sm90a_kernels.cuh)."""
    t = byte * 0x00040040 & M32
    return (t & 0x01C001C0) | ((t << 6) & M32 & 0x80008000)


def _e2m1x2_decode_f16(byte):
    t = byte * 0x00200200 & M32
    return (t & 0x0E000E00) | ((t << 3) & M32 & 0x80008000)


def _f16_l2_adjacent(w, t):
    """nvfp4::f16_l2_adjacent: lane t's codes 2t, 2t + 1 of a layout-2 word."""
    ha = (w << (3 if t >> 1 else 0)) & M32 & P16
    mask, mul = (0x20382038, 0x44) if t >> 1 else (0x40074007, 0x202)
    hb = ((w & mask) * mul & M32) & P16
    return _prmt(ha, hb, 0x7632 if t & 1 else 0x5410)


def _bf16_l1_adjacent(w, t):
    """nvfp4::bf16_l1_adjacent: lane t's codes 2t, 2t + 1 of a layout-1 word."""
    ha = (_rotl(w, 13) if t & 1 else w) & P
    hb = (((w & 0x001B001B) * 0x1084 & M32) if t & 1 else _rotl(w, 10)) & P
    lo, hi = (ha >> 16, hb >> 16) if t >> 1 else (ha & 0xFFFF, hb & 0xFFFF)
    return lo | (hi << 16)


def _bf16_l3_adjacent(w, t):
    """nvfp4::bf16_l3_adjacent: lane t's codes 2t, 2t + 1 of a layout-3 word (pair h_t of the
    layout-1 decode: one mover per lane)."""
    h = ((w & 0x001B001B) * 0x1084 & M32) if t == 3 else _rotl(w, (0, 10, 13)[t])
    return h & P


@pytest.mark.parametrize("layout", [1, 2, 3])
def test_layout_gemm_read_gives_the_layout0_pair(layout):
    """Each lane t of the decoding GEMM reads byte t (codes 2t, 2t + 1) of a word: from the layout
    the same 32 bits as from layout 0, for every code pair at every byte and random words."""
    bit_map = F.layout_bit_map(layout)
    read, std = {1: (_bf16_l1_adjacent, _e2m1x2_decode_bf16), 2: (_f16_l2_adjacent, _e2m1x2_decode_f16),
                 3: (_bf16_l3_adjacent, _e2m1x2_decode_bf16)}[layout]
    rng = random.Random(11)
    words = [v << (8 * t) for t in range(4) for v in range(256)] + [rng.getrandbits(32) for _ in range(20000)]
    for w in words:
        wl = _to_l1(w, bit_map)
        for t in range(4):
            assert read(wl, t) == std((w >> (8 * t)) & 0xFF), (hex(w), t)


@pytest.mark.parametrize("layout", [1, 2, 3])
def test_relayout_reference_is_the_bit_map(layout):
    g = torch.Generator().manual_seed(3)
    wp = torch.randint(0, 256, (5, 24), dtype=torch.uint8, generator=g)
    got = F.relayout_nvfp4(wp, layout)
    bit_map = F.layout_bit_map(layout)
    for r in range(5):
        for i in range(6):
            w = int.from_bytes(bytes(wp[r, 4 * i:4 * i + 4].tolist()), "little")
            want = _to_l1(w, bit_map).to_bytes(4, "little")
            assert bytes(got[r, 4 * i:4 * i + 4].tolist()) == want
    assert torch.equal(F.relayout_nvfp4(got, layout, inverse=True), wp)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", [1, 2, 3])
@pytest.mark.parametrize("N,K", [(1, 16), (7, 48), (33, 1072), (256, 4096)])
def test_relayout_op_matches_reference(device, layout, N, K):
    g = torch.Generator().manual_seed(N * 1000 + K)
    wp = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8, generator=g)
    want = F.relayout_nvfp4(wp, layout)
    got = ops.nvfp4_relayout(wp.to(device), layout)
    assert got.shape == wp.shape and got.dtype == torch.uint8 and got.device.type == device
    assert torch.equal(got.cpu(), want)
    back = ops.nvfp4_relayout(got, layout, inverse=True)
    assert torch.equal(back.cpu(), wp)
    assert torch.equal(ops.nvfp4_relayout(wp.to(device), 0).cpu(), wp)  # layout 0: a copy
    # a contiguous view whose base is 4 bytes into its storage (not 8-aligned)
    buf = torch.zeros(wp.numel() + 4, dtype=torch.uint8)
    buf[4:] = wp.reshape(-1)
    view = buf.to(device)[4:].view(N, K // 2)
    assert torch.equal(ops.nvfp4_relayout(view, layout).cpu(), want)


LAYOUT_DTYPE = {1: torch.bfloat16, 2: torch.float16, 3: torch.bfloat16}


def _operands(M, N, K, seed, dtype=torch.bfloat16):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(N, K, generator=g) * torch.exp2(torch.randint(-6, 6, (N, K // 16), generator=g)).repeat_interleave(16, 1)
    wp, ws, gs = F.quantize_nvfp4(w)
    x = torch.randn(M, K, generator=g).to(dtype)
    b = torch.randn(N, generator=g).to(dtype)
    return x, wp, ws, gs, b


@pytest.mark.parametrize("layout", [1, 2, 3])
@pytest.mark.parametrize("M", [1, 2, 3, 5, 8, 13, 16, 40])
@pytest.mark.parametrize("N,K", [(1, 16), (17, 48), (37, 1072), (130, 4160)])
def test_gemv_layout_same_bits_cpu(layout, M, N, K):
    x, wp, ws, gs, b = _operands(M, N, K, seed=M * 7 + N, dtype=LAYOUT_DTYPE[layout])
    wl = ops.nvfp4_relayout(wp, layout)
    for bias in (None, b):
        y0 = ops.nvfp4_gemv(x, wp, ws, gs, bias)
        y1 = ops.nvfp4_gemv(x, wl, ws, gs, bias, "auto", layout)
        assert torch.equal(y0.view(torch.int16), y1.view(torch.int16))


@pytest.mark.parametrize("device", DEVICES)
def test_layout_errors(device):
    x, wp, ws, gs, _ = _operands(2, 8, 64, seed=1)
    x, wp, ws, gs = x.to(device), wp.to(device), ws.to(device), gs.to(device)
    w1 = ops.nvfp4_relayout(wp, 1)
    w3 = ops.nvfp4_relayout(wp, 3)
    cases = [
        (lambda: ops.nvfp4_gemv(x, w1, ws, gs, None, "auto", 5), "layout must be 0"),
        (lambda: ops.nvfp4_gemv(x, w1, ws, gs, None, "auto", -1), "layout must be 0"),
        # layout 4 needs bf16 x, then whole tiles (N = 8 here) and pieces (K = 64)
        (lambda: ops.nvfp4_gemv(x.half(), w1, ws, gs, None, "auto", 4), "layout 4 is the bf16 decode order"),
        (lambda: ops.nvfp4_gemv(x, w1, ws, gs, None, "auto", 4), "needs N % 16 == 0 and K % 128 == 0, got N = 8, K = 64"),
        (lambda: ops.nvfp4_relayout(wp, 4), "needs N % 16 == 0 and K % 128 == 0, got N = 8"),
        (lambda: ops.nvfp4_relayout_scale(ws, 4), "needs N % 16 == 0 and K % 128 == 0, got N = 8"),
        (lambda: ops.nvfp4_relayout_scale(ws, 5), "layout must be 0"),
        (lambda: ops.nvfp4_relayout_scale(ws.view(torch.uint8), 0), "w_scale must be"),
        (lambda: ops.nvfp4_relayout_scale(ws.t(), 0), "contiguous"),
        (lambda: ops.nvfp4_relayout_scale(ws.reshape(-1), 0), "w_scale must be"),
        (lambda: ops.nvfp4_gemv(x.half(), w1, ws, gs, None, "auto", 1), "needs bfloat16 x"),
        (lambda: ops.nvfp4_gemv(x.half(), w3, ws, gs, None, "auto", 3), "needs bfloat16 x"),
        (lambda: ops.nvfp4_gemv(x, w1, ws, gs, None, "auto", 2), "needs float16 x"),
        (lambda: ops.nvfp4_relayout(wp, 5), "layout must be 0"),
        (lambda: ops.nvfp4_relayout(wp[:, :4].contiguous(), 1), "multiple of 16"),
        (lambda: ops.nvfp4_relayout(wp.view(torch.int8), 1), "w_packed must be"),
        (lambda: ops.nvfp4_relayout(wp.reshape(-1), 1), "w_packed must be"),
        (lambda: ops.nvfp4_relayout(wp.t(), 1), "contiguous"),
    ]
    if device == "cuda":
        for path in ("fma", "tile"):
            cases.append((lambda p=path: ops.nvfp4_gemv(x, w1, ws, gs, None, p, 1), "runs on paths 'mma' and 'wgmma'"))
            cases.append((lambda p=path: ops.nvfp4_gemv(x.half(), w1, ws, gs, None, p, 2),
                          "runs on paths 'mma' and 'wgmma'"))
            cases.append((lambda p=path: ops.nvfp4_gemv(x, w3, ws, gs, None, p, 3), "runs on paths 'mma' and 'wgmma'"))
        for layout in (0, 1):
            cases.append((lambda l=layout: ops.nvfp4_gemv(x, w1, ws, gs, None, "direct", l), "path 'direct' reads layout 3"))
        # K = 64 here: the direct GEMV reads whole 128-code pieces (auto takes the mma GEMV instead)
        cases.append((lambda: ops.nvfp4_gemv(x, w3, ws, gs, None, "direct", 3), "needs K % 128 == 0"))
        # layout 4: paths 'direct' and 'mma' alone (whole tiles: 16 x 256 here)
        x4, wp4, ws4, gs4, _ = (t.to(device) for t in _operands(2, 16, 256, seed=2))
        w4, s4 = ops.nvfp4_relayout(wp4, 4), ops.nvfp4_relayout_scale(ws4, 4)
        for path in ("fma", "tile", "wgmma"):
            cases.append((lambda p=path: ops.nvfp4_gemv(x4, w4, s4, gs4, None, p, 4),
                          "runs on paths 'direct' and 'mma' only"))
    else:
        cases.append((lambda: ops.nvfp4_gemv(x, w1, ws, gs, None, "mma", 1), "not a CPU path"))
        cases.append((lambda: ops.nvfp4_gemv(x, w3, ws, gs, None, "direct", 3), "not a CPU path"))
    for fn, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            fn()


def _tile_reference(a, chunk):
    """Layout 4's order built byte by byte: tile T's piece p is rows 16 T .. 16 T + 15 of the
    piece's `chunk` bytes, one after another; pieces of a tile follow, then the next tile."""
    N, C = a.shape
    P = C // chunk
    src = a.view(torch.uint8).reshape(N, C)
    out = torch.empty(N * C, dtype=torch.uint8)
    o = 0
    for T in range(N // 16):
        for p in range(P):
            for r in range(16):
                out[o:o + chunk] = src[16 * T + r, chunk * p:chunk * (p + 1)]
                o += chunk
    return out.view(N, C)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("N,K", [(16, 128), (48, 384), (32, 1024)])
def test_tiled_relayout_matches_reference(device, N, K):
    g = torch.Generator().manual_seed(N + K)
    wp = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8, generator=g)
    ws = torch.randint(0, 0x7F, (N, K // 16), dtype=torch.uint8, generator=g).view(torch.float8_e4m3fn)
    w4 = ops.nvfp4_relayout(wp.to(device), 4)
    s4 = ops.nvfp4_relayout_scale(ws.to(device), 4)
    assert w4.shape == wp.shape and w4.dtype == torch.uint8 and w4.device.type == device
    assert s4.shape == ws.shape and s4.dtype == torch.float8_e4m3fn and s4.device.type == device
    assert torch.equal(w4.cpu(), _tile_reference(F.relayout_nvfp4(wp, 3), 64))
    assert torch.equal(s4.cpu().view(torch.uint8), _tile_reference(ws, 8))
    assert torch.equal(ops.nvfp4_relayout(w4, 4, inverse=True).cpu(), wp)
    assert torch.equal(ops.nvfp4_relayout_scale(s4, 4, inverse=True).cpu().view(torch.uint8), ws.view(torch.uint8))
    for layout in (0, 1, 2, 3):  # the word layouts' scales: a copy
        c = ops.nvfp4_relayout_scale(ws.to(device), layout, inverse=layout == 2)
        assert torch.equal(c.cpu().view(torch.uint8), ws.view(torch.uint8))


@pytest.mark.parametrize("M", [1, 3, 8, 9, 16, 40])
@pytest.mark.parametrize("N,K", [(16, 128), (48, 384), (160, 4096)])
def test_gemv_tiled_same_bits_cpu(M, N, K):
    x, wp, ws, gs, b = _operands(M, N, K, seed=M * 5 + N)
    w4, s4 = ops.nvfp4_relayout(wp, 4), ops.nvfp4_relayout_scale(ws, 4)
    for bias in (None, b):
        y0 = ops.nvfp4_gemv(x, wp, ws, gs, bias)
        y4 = ops.nvfp4_gemv(x, w4, s4, gs, bias, "auto", 4)
        assert torch.equal(y0.view(torch.int16), y4.view(torch.int16))
