"""The storage formats (torchquant.formats) against formats.md and independent oracles.

torch provides e4m3 conversion (the oracle for FP8) and the float4_e2m1fn_x2
container dtype without conversions; ml_dtypes' float4_e2m1fn provides the
independent E2M1 rounding oracle.
"""

import numpy as np
import pytest
import torch

from torchquant import formats as F

ml_dtypes = pytest.importorskip("ml_dtypes")
FP4X2 = getattr(torch, "float4_e2m1fn_x2", None)  # torch 2.8+; the package supports torch 2.6+


def test_e2m1_table_matches_format_doc():
    codes = torch.arange(16, dtype=torch.uint8)
    vals = F.e2m1_decode(codes)
    mags = [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    assert vals[:8].tolist() == mags
    assert vals[8:].tolist() == [-m for m in mags]
    assert torch.signbit(vals[8])  # code 8 is -0


def test_e2m1_rne_matches_ml_dtypes_dense_sweep():
    # every representable value, every midpoint (the ties), and a dense sweep
    mags = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float32)
    mids = (mags[1:] + mags[:-1]) / 2
    sweep = np.linspace(-6, 6, 24001, dtype=np.float32)
    eps = np.float32(1e-6)
    v = np.concatenate([mags, -mags, mids, -mids, mids + eps, mids - eps, -mids - eps, sweep])
    want = v.astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    got = F.e2m1_encode(torch.from_numpy(v)).numpy()
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, f"first mismatch at {v[bad[0]]}: got {got[bad[0]]}, ml_dtypes {want[bad[0]]}"


def test_e2m1_ties_to_even_explicit():
    ties = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0])
    assert F.e2m1_decode(F.e2m1_encode(ties)).tolist() == [0.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0]


def test_nvfp4_packing_even_k_in_low_nibble():
    codes = torch.tensor([[1, 2, 3, 4, 15, 8]], dtype=torch.uint8)
    packed = F.pack_e2m1(codes)
    assert packed.tolist() == [[0x21, 0x43, 0x8F]]
    assert torch.equal(F.unpack_e2m1(packed), codes)
    # The same bytes are torch's float4_e2m1fn_x2 container (torch 2.8+): 2 elements per byte.
    if FP4X2 is not None:
        x2 = packed.view(FP4X2)
        assert x2.shape == (1, 3) and torch.equal(x2.view(torch.uint8), packed)


def _ml_e2m1_pack(v: np.ndarray) -> np.ndarray:
    c = v.astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    return (c[:, 0::2] | (c[:, 1::2] << 4)).astype(np.uint8)


def test_quantize_nvfp4_recipe_against_independent_oracle():
    torch.manual_seed(0)
    w = torch.randn(24, 64) * torch.logspace(-3, 1, 64)
    w[3] = 0.0  # an all-zero row: every block stores scale 0 and codes 0
    packed, bs, g = F.quantize_nvfp4(w)
    amax = w.abs().max()
    assert g.dtype == torch.float32 and g.dim() == 0
    assert float(g) == float(amax / (448.0 * 6.0))
    bamax = w.view(24, 4, 16).abs().amax(2)
    want_bs = torch.clamp(bamax / 6.0 / g, max=448.0).to(torch.float8_e4m3fn)
    assert torch.equal(bs.view(torch.uint8), want_bs.view(torch.uint8))
    denom = (bs.float() * g).repeat_interleave(16, 1)
    scaled = torch.where(denom > 0, w / torch.where(denom > 0, denom, torch.ones_like(denom)), torch.zeros_like(w))
    want = _ml_e2m1_pack(np.clip(scaled.numpy(), -6, 6))
    want[denom.numpy()[:, 0::2] == 0] = 0
    assert np.array_equal(packed.numpy(), want)
    assert torch.all(packed[3] == 0) and torch.all(bs[3].float() == 0)


def test_nvfp4_dequant_error_within_half_step():
    torch.manual_seed(1)
    w = torch.randn(16, 128)
    packed, bs, g = F.quantize_nvfp4(w)
    back = F.dequantize_nvfp4(packed, bs, g)
    # half the largest E2M1 step (2, between 4 and 6) times the block's scale,
    # plus the e4m3 rounding of the scale (relative 2^-4) on the largest value.
    step = (bs.float() * g).repeat_interleave(16, 1)
    assert torch.all((back - w).abs() <= step * 1.0 + w.abs() * 2**-4 + 1e-12)


def test_fp8_block_quantize_matches_torch_cast_and_clamps():
    torch.manual_seed(2)
    w = torch.randn(7, 300) * 3
    w[0, 5] = 1e-30  # tiny values stay finite
    for bs in (16, 32, 128, 256):
        q, s = F.quantize_fp8_block(w, bs)
        nb = (300 + bs - 1) // bs
        assert q.dtype == torch.float8_e4m3fn and s.shape == (7, nb)
        for b in range(nb):
            blk = w[:, b * bs : (b + 1) * bs]
            amax = blk.abs().amax(1)
            assert torch.equal(s[:, b], amax / 448.0)
            want = torch.clamp(blk / s[:, b : b + 1], -448, 448).to(torch.float8_e4m3fn)
            assert torch.equal(q[:, b * bs : (b + 1) * bs].view(torch.uint8), want.view(torch.uint8))
        assert torch.isfinite(q.float()).all()
        assert q.float().abs().max() <= 448


def test_fp8_zero_block_gets_scale_one():
    w = torch.zeros(2, 64)
    w[1, 40] = 2.0
    q, s = F.quantize_fp8_block(w, 32)
    assert s.tolist() == [[1.0, 1.0], [1.0, float(torch.tensor(2.0) / 448.0)]]
    assert float(F.dequantize_fp8_block(q, s, 32)[1, 40]) == 2.0


def test_int8_symmetric_and_asymmetric_recipes():
    torch.manual_seed(3)
    x = torch.randn(5, 77)
    q, s, z = F.quantize_int8(x, per_row=True, symmetric=True)
    assert torch.equal(s, x.abs().amax(1) / 127.0)
    assert torch.all(z == 0)
    assert torch.equal(q, torch.clamp(torch.round(x / s[:, None]), -128, 127).to(torch.int8))
    a = torch.rand(5, 77)  # non-negative: zero point earns its bit
    q, s, z = F.quantize_int8(a, per_row=False, symmetric=False)
    assert s.dim() == 0 and z.dim() == 0 and int(z) == -128
    back = F.dequantize_int8(q, s, z)
    assert float((back - a).abs().max()) <= float(s) / 2 * (1 + 1e-6)


def test_int8_asymmetric_extremes_stay_in_range():
    # [-1, 1]: lo / s lands a hair off -127.5, the zero point rounds to -1 and
    # +1 maps to code 126 (126 - (-1) = 127 steps): in range, within s / 2.
    x = torch.tensor([[-1.0, 1.0]])
    q, s, z = F.quantize_int8(x, per_row=True, symmetric=False)
    assert q.tolist() == [[-128, 126]] and z.tolist() == [-1]
    assert torch.all((F.dequantize_int8(q, s, z) - x).abs() <= s / 2 * (1 + 2**-20))


def test_int8_range_wider_than_fp32_max():
    # hi - lo overflows fp32 for finite ends past its max / 2: the scale is hi / 255 - lo / 255,
    # finite, and every value comes back within half a step plus the rounding of x / s (at most
    # 256 s 2^-24) and of s itself (two roundings, a hair more at the clamped ends): s (1/2 + 2^-14).
    # The C++ ops agree bit for bit: tests/test_cpu_kernels.py test_quantize_int8_extremes.
    x = torch.tensor([[3.0e38, -3.0e38, 1.0, -2.5e37], [1.7e38, -1.7e38, 0.0, 0.0]])
    for per_row in (True, False):
        q, s, z = F.quantize_int8(x, per_row=per_row, symmetric=False)
        assert bool(torch.isfinite(s).all())
        sv = s.double().reshape(-1, 1) if per_row else s.double()
        zv = z.double().reshape(-1, 1) if per_row else z.double()
        assert bool(((sv * (q.double() - zv) - x.double()).abs() <= sv * (0.5 + 2**-14)).all())
        if per_row:
            assert float(s[0]) == float(torch.tensor(3.0e38) / 255 - torch.tensor(-3.0e38) / 255)
            assert float(s[1]) == float((torch.tensor(1.7e38) - torch.tensor(-1.7e38)) / 255)


def test_int8_colsum():
    w_q = torch.randint(-128, 128, (9, 33), dtype=torch.int8)
    assert torch.equal(F.int8_colsum(w_q), w_q.long().sum(1).int())


def test_quantizers_reject_nan_and_inf():
    for bad in (float("nan"), float("inf"), -float("inf")):
        w = torch.ones(4, 32)
        w[1, 3] = bad
        with pytest.raises(ValueError, match="NaN or Inf"):
            F.quantize_int8(w)
        with pytest.raises(ValueError, match="NaN or Inf"):
            F.quantize_fp8_block(w, 16)
        with pytest.raises(ValueError, match="NaN or Inf"):
            F.quantize_nvfp4(w)
        with pytest.raises(ValueError, match="NaN or Inf"):
            F.prune24(w)


def test_prune24_keeps_two_largest_ties_lower_index():
    w = torch.tensor([[1.0, -3.0, 2.0, 0.5, 2.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, -1.0]])
    p, m = F.prune24(w)
    assert p.tolist() == [[0.0, -3.0, 2.0, 0.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0]]
    # the third group has one nonzero: the lowest zero position is kept
    assert m.tolist() == [[False, True, True, False, True, True, False, False, True, False, False, True]]


@pytest.mark.parametrize("dtype", [torch.int8, torch.float16, torch.bfloat16, torch.float32])
def test_compress24_round_trip_and_layout(dtype):
    torch.manual_seed(4)
    w = (torch.randn(6, 44) * 50).to(dtype)
    p, _ = F.prune24(w)
    values, meta = F.compress24(p)
    assert values.shape == (6, 22) and meta.shape == (6, 6) and meta.dtype == torch.uint8
    assert torch.equal(F.decompress24(values, meta), p)
    # nibble layout: group 0 in the low nibble of byte 0, positions p0 | p1 << 2
    g0 = (p[0, :4] != 0).nonzero().flatten().tolist()
    if len(g0) == 2:
        assert int(meta[0, 0]) & 0xF == g0[0] | (g0[1] << 2)
    # the odd 11th group leaves the last byte's high nibble 0
    assert torch.all(meta[:, 5] >> 4 == 0)


def test_compress24_rejects_three_nonzeros():
    w = torch.zeros(2, 8)
    w[1, 4:7] = 1.0
    with pytest.raises(ValueError, match="row 1, group 1"):
        F.compress24(w)


def test_interop_compressed_tensors_inverts_global_scale():
    torch.manual_seed(5)
    w = torch.randn(8, 32)
    packed, bs, g = F.quantize_nvfp4(w)
    ct = F.nvfp4_to_compressed_tensors(packed, bs, g)
    assert torch.allclose(ct["weight_global_scale"], 1.0 / g.reshape(1))
    p2, bs2, g2 = F.nvfp4_from_compressed_tensors(ct["weight_packed"], ct["weight_scale"], ct["weight_global_scale"])
    back = F.dequantize_nvfp4(p2, bs2, g2)
    assert torch.allclose(back, F.dequantize_nvfp4(packed, bs, g), rtol=2**-22, atol=0)
    for form in (packed,) + (() if FP4X2 is None else (packed.view(FP4X2),)):  # uint8, float4_e2m1fn_x2
        p3, bs3, g3 = F.nvfp4_from_modelopt(form, bs, g.reshape(1))
        assert torch.equal(p3, packed) and float(g3) == float(g)
        # the float4_e2m1fn_x2 form is checked like the uint8 one
        with pytest.raises(ValueError, match="linear, not swizzled"):
            F.nvfp4_from_modelopt(form, bs[:, :1], g)
        with pytest.raises(TypeError, match=r"uint8 \[N, K/2\]"):
            F.nvfp4_from_modelopt(form.reshape(-1), bs, g)
    # global scales come from amax: zero, negative or non-finite ones are refused
    for bad in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="weight_scale_2 must be finite and positive"):
            F.nvfp4_from_modelopt(packed, bs, torch.tensor(bad))
        with pytest.raises(ValueError, match="weight_global_scale must be finite and positive"):
            F.nvfp4_from_compressed_tensors(packed, bs, torch.tensor([bad]))
    # K not a multiple of 16 (compressed-tensors writes ceil(K/16) scales for it, with a warning)
    with pytest.raises(ValueError, match="K = 40 .* not a multiple of 16"):
        F.nvfp4_from_compressed_tensors(torch.zeros(8, 20, dtype=torch.uint8), torch.zeros(8, 3).to(torch.float8_e4m3fn),
                                        torch.tensor([1.0]))
    with pytest.raises(TypeError, match="pack-quantized"):
        F.nvfp4_from_compressed_tensors(torch.zeros(8, 4, dtype=torch.int32), bs, torch.tensor([1.0]))


def test_interop_nvfp4_producers_conventions_by_hand():
    """Checkpoint bytes written by hand the producers' way, independently of torchquant's
    quantizer and writers: codes sign << 3 | index into {0, .5, 1, 1.5, 2, 3, 4, 6}, the even k in
    the low nibble; e4m3 block scales per 16 along K; the weight = value * block scale * s, where s
    is ModelOpt's weight_scale_2 and 1 / compressed-tensors' weight_global_scale. The loaded
    tensors' dequantized weight must match that (float64) to fp32 rounding."""
    torch.manual_seed(12)
    n, k = 6, 64
    table = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    codes = torch.randint(0, 16, (n, k))
    values = torch.tensor([(-1.0 if c >= 8 else 1.0) * table[c % 8] for c in codes.reshape(-1).tolist()],
                          dtype=torch.float64).reshape(n, k)
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).to(torch.uint8)
    block = (torch.rand(n, k // 16) * 3 + 0.1).to(torch.float8_e4m3fn)
    s = 0.0123
    want = values * block.double().repeat_interleave(16, 1) * torch.tensor(s, dtype=torch.float32).double()
    p, bs, g = F.nvfp4_from_modelopt(packed, block, torch.tensor(s))
    # fp32 dequantization: two roundings of the product (a nibble or direction error is far off)
    assert torch.allclose(F.dequantize_nvfp4(p, bs, g).double(), want, rtol=2**-22, atol=0)
    inv = torch.tensor([1.0 / s], dtype=torch.float32)
    p, bs, g = F.nvfp4_from_compressed_tensors(packed, block, inv)
    want_ct = values * block.double().repeat_interleave(16, 1) * (1.0 / inv.double())
    assert torch.allclose(F.dequantize_nvfp4(p, bs, g).double(), want_ct, rtol=2**-22, atol=0)


def test_interop_deepseek_128x128_scales():
    s = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    ours = F.fp8_scales_from_128x128(s, 200, 256)
    assert ours.shape == (200, 2)
    assert ours[0].tolist() == [1.0, 2.0] and ours[127].tolist() == [1.0, 2.0] and ours[128].tolist() == [3.0, 4.0]
    with pytest.raises(ValueError):
        F.fp8_scales_from_128x128(s, 300, 256)


def test_interop_fp8_per_tensor_channel_and_block_scales():
    """ModelOpt / compressed-tensors FP8 scales written into fp8_block's [N, ceil(K/bs)]: the
    dequantized weight is the checkpoint's code * scale, bit for bit."""
    torch.manual_seed(6)
    n, k = 200, 320
    w_q = (torch.randn(n, k) * 40).to(torch.float8_e4m3fn)
    codes = w_q.float()
    per_tensor = torch.tensor(0.0123)
    per_channel = torch.rand(n, 1) * 0.01 + 1e-3
    blocks = torch.rand((n + 127) // 128, (k + 127) // 128) * 0.01 + 1e-3
    want_block = blocks.repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)[:, :k]
    cases = [(F.fp8_from_modelopt, per_tensor, codes * per_tensor),
             (F.fp8_from_compressed_tensors, per_tensor.reshape(1), codes * per_tensor),
             (F.fp8_from_compressed_tensors, per_channel, codes * per_channel),
             (F.fp8_from_compressed_tensors, per_channel.reshape(n).to(torch.bfloat16), codes * per_channel.reshape(n, 1).to(torch.bfloat16).float()),
             (F.fp8_from_compressed_tensors, blocks, codes * want_block)]
    for fn, scale, want in cases:
        for bs in ((128,) if scale.shape == blocks.shape else (32, 128, 256)):
            wq2, sc = fn(w_q, scale, bs)
            assert sc.shape == (n, (k + bs - 1) // bs) and sc.dtype == torch.float32
            assert torch.equal(F.dequantize_fp8_block(wq2, sc, bs), want)
            assert torch.equal(torch.ops.torchquant.dequantize_fp8_block(wq2, sc, bs, torch.float32), want)
    with pytest.raises(ValueError, match="128 x 128 block scales need block_size 128"):
        F.fp8_from_compressed_tensors(w_q, blocks, 64)
    # ModelOpt FP8_PC_PT ([N] fp32) and FP8_PB_WO ([ceil(N/128), 1, ceil(K/128), 1]) scales
    wq2, sc = F.fp8_from_modelopt(w_q, per_channel.reshape(n))
    assert torch.equal(F.dequantize_fp8_block(wq2, sc, 128), codes * per_channel)
    wq2, sc = F.fp8_from_modelopt(w_q, blocks.reshape(blocks.shape[0], 1, blocks.shape[1], 1))
    assert torch.equal(F.dequantize_fp8_block(wq2, sc, 128), codes * want_block)
    with pytest.raises(ValueError, match=r"\[200, 1\]"):
        F.fp8_from_modelopt(w_q, blocks.reshape(blocks.shape[0], 1, blocks.shape[1], 1).repeat(1, 2, 1, 1))
    with pytest.raises(ValueError, match=r"\[200, 1\]"):
        F.fp8_from_compressed_tensors(w_q, torch.rand(n, 3))
    with pytest.raises(TypeError, match=r"weight\.view\(torch\.float8_e4m3fn\)"):
        F.fp8_from_compressed_tensors(w_q.view(torch.uint8), per_channel)
    with pytest.raises(ValueError, match="NaN or Inf"):
        F.fp8_from_compressed_tensors(w_q, torch.tensor(float("inf")))


def test_underflowing_scales_are_replaced_by_one():
    # amax > 0 but amax / 127 (or / 448, / 2688) underflows fp32 to 0: the
    # scale would divide by zero. It is treated like an all-zero tensor.
    tiny = torch.full((2, 32), 1e-44)
    q, s, _ = F.quantize_int8(tiny)
    assert torch.all(s == 1) and torch.all(q == 0)
    fq, fs = F.quantize_fp8_block(tiny, 16)
    assert torch.all(fs == 1) and torch.isfinite(fq.float()).all()
    p, bs, g = F.quantize_nvfp4(tiny)
    assert float(g) == 1.0 and torch.all(p == 0)
