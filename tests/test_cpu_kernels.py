"""CPU kernels (csrc/cpu/*.cpp) against formats.md.

Quantizers and packers are checked bit for bit against pure-torch formulas
written here, independently of the C++ (and of torchquant.formats). The
integer GEMM is checked for exact int32 accumulation against an int64 torch
matmul, and its fp32 epilogue bit for bit against the documented operation
order. The fp32-accumulating GEMVs are gated by a derived bound: a float64
reference over the DEQUANTIZED operands, an fp32 summation error of
gamma(n) * sum |x * w| with n the longest chain of roundings, and half an ulp
of the output dtype. No tuned tolerances.

Build first: TORCHQUANT_CPU_ONLY=1 python setup.py build_ext --inplace
"""

import glob
import math
import os
import time

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load_ops():
    # Loads the compiled library itself (it registers every op on import), so
    # these tests need only the .so, not the Python package around it.
    if not hasattr(torch.ops.torchquant, "int8_matmul"):
        lib = os.path.join(ROOT, "torchquant", "_C.so")
        libs = [lib] if os.path.exists(lib) else sorted(glob.glob(os.path.join(ROOT, "torchquant", "_C.*.so")))
        if not libs:
            pytest.skip("torchquant/_C.so is not built", allow_module_level=True)
        torch.ops.load_library(libs[0])
    return torch.ops.torchquant


ops = _load_ops()

U32 = 2.0**-24  # fp32 unit roundoff
UNIT = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
# Half the smallest subnormal: the absolute rounding error floor of each dtype.
TINY = {torch.float32: 2.0**-150, torch.float16: 2.0**-25, torch.bfloat16: 2.0**-134}


def gamma(n: int) -> float:
    return n * U32 / (1 - n * U32)


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def rand_int8(shape, g, lo=-128, hi=127):
    return torch.randint(lo, hi + 1, shape, generator=g, dtype=torch.int8)


# ============================================================== int8 ======
def int8_epilogue_emulated(a_q, a_scale, a_zero, w_q, w_scale, w_colsum, bias, out_dtype):
    """The documented fp32 epilogue, one torch op per step (no FMA possible)."""
    acc = a_q.long() @ w_q.long().T
    if a_zero is not None:
        cs = w_q.long().sum(1) if w_colsum is None else w_colsum.long()
        acc = acc - a_zero.long().reshape(-1, 1) * cs.reshape(1, -1)
    s = a_scale.reshape(-1, 1) * w_scale.reshape(1, -1)  # fp32 multiply
    y = acc.to(torch.float32) * s  # int -> fp32 (RNE), fp32 multiply
    if bias is not None:
        y = y + bias.to(torch.float32)  # fp32 add
    return y.to(out_dtype or torch.float32)


@pytest.mark.parametrize("K", [16, 48, 100, 112, 336, 784, 1000, 4096])
def test_int8_matmul_exact_accumulation(K):
    g = gen(K)
    N = 37
    for M in range(1, 18):
        a = rand_int8((M, K), g)
        w = rand_int8((N, K), g)
        one = torch.ones(1)
        acc = a.long() @ w.long().T
        y = ops.int8_matmul(a, one, None, w, one)
        # float(acc) is exact while |acc| <= 2^24 (always for K <= 1024).
        assert torch.equal(y, acc.to(torch.float32)), (M, K)
        if K > 1024:  # small activations keep |acc| < 2^24: an exact integer check
            a_small = rand_int8((M, K), g, -3, 3)
            y = ops.int8_matmul(a_small, one, None, w, one, path="cpu")
            assert torch.equal(y.double(), (a_small.long() @ w.long().T).double()), (M, K)


def test_int8_matmul_extremes():
    # -128 * -128 summed over K = 4096 is 2^26: the largest accumulator.
    for K in (1024, 4096):
        a = torch.full((3, K), -128, dtype=torch.int8)
        w = torch.full((5, K), -128, dtype=torch.int8)
        w[1] = 127
        y = ops.int8_matmul(a, torch.ones(()), None, w, torch.ones(()))
        assert torch.equal(y.double(), (a.long() @ w.long().T).double())


CASES = [
    # (a_scale per row, a_zero: None / "row" / "scalar", colsum given, bias dtype, out dtype)
    (True, None, False, None, None),
    (False, None, False, torch.float32, torch.float16),
    (True, "row", False, torch.float16, None),
    (True, "row", True, torch.bfloat16, torch.bfloat16),
    (False, "scalar", False, torch.float32, torch.float32),
    (True, "scalar", True, None, torch.float16),
]


@pytest.mark.parametrize("per_row,zero,give_colsum,bias_dtype,out_dtype", CASES)
@pytest.mark.parametrize("M,K", [(1, 100), (7, 272), (16, 1024), (17, 4096)])
def test_int8_matmul_epilogue(per_row, zero, give_colsum, bias_dtype, out_dtype, M, K):
    g = gen(M * 131 + K)
    N = 37
    a = rand_int8((M, K), g)
    w = rand_int8((N, K), g)
    a_scale = (torch.rand(M if per_row else 1, generator=g) * 0.02 + 1e-3).float()
    w_scale = (torch.rand(N, generator=g) * 0.01 + 1e-4).float()
    a_zero = None
    if zero == "row":
        a_zero = torch.randint(-128, 128, (M,), generator=g, dtype=torch.int32)
    elif zero == "scalar":
        a_zero = torch.randint(-128, 128, (), generator=g, dtype=torch.int32)
    colsum = w.int().sum(1, dtype=torch.int32) if give_colsum else None
    bias = None if bias_dtype is None else torch.randn(N, generator=g).to(bias_dtype)

    y = ops.int8_matmul(a, a_scale, a_zero, w, w_scale, colsum, bias, out_dtype)
    od = out_dtype or torch.float32
    assert y.dtype == od and y.shape == (M, N)

    # 1) Bit-exact against the documented fp32 operation order.
    want = int8_epilogue_emulated(a, a_scale, a_zero, w, w_scale, colsum, bias, out_dtype)
    assert torch.equal(y, want)

    # 2) Within fp32 rounding of the float64 result (derived, not tuned):
    # float(c), s and the product are each off by one fp32 rounding (3u), the
    # bias add by u of the sum, the output cast by half an ulp of out dtype.
    acc = a.long() @ w.long().T
    if a_zero is not None:
        acc = acc - a_zero.long().reshape(-1, 1) * w.long().sum(1).reshape(1, -1)
    s64 = a_scale.double().reshape(-1, 1) * w_scale.double().reshape(1, -1)
    p64 = acc.double() * s64
    y64 = p64 + (0 if bias is None else bias.double())
    e_p = p64.abs() * gamma(3)
    e_y = e_p + U32 * (y64.abs() + e_p)
    bound = e_y + UNIT[od] * (y64.abs() + e_y) + TINY[od]
    assert bool(((y.double() - y64).abs() <= bound).all())


def test_int8_matmul_colsum_is_used_when_given():
    g = gen(7)
    a, w = rand_int8((4, 64), g), rand_int8((9, 64), g)
    one, z = torch.ones(1), torch.tensor([3], dtype=torch.int32)
    cs = w.int().sum(1, dtype=torch.int32)
    base = ops.int8_matmul(a, one, z, w, one)
    assert torch.equal(base, ops.int8_matmul(a, one, z, w, one, cs))
    shifted = ops.int8_matmul(a, one, z, w, one, cs + 1)  # trusted as given
    assert torch.equal(shifted, base - 3)


# ------------------------------------------------------------ quantize int8
def quantize_int8_formula(x, per_row, symmetric):
    xf = x.float()
    if per_row:
        mn, mx = xf.amin(1), xf.amax(1)
    else:
        mn, mx = xf.amin(), xf.amax()
    if symmetric:
        amax = xf.abs().amax(1) if per_row else xf.abs().amax()
        s = torch.where(amax / 127 == 0, torch.ones_like(amax), amax / 127)
        z = torch.zeros_like(s, dtype=torch.int32)
        sv = s.reshape(-1, 1) if per_row else s
        q = torch.round(xf / sv).clamp(-128, 127)
    else:
        lo, hi = mn.clamp(max=0), mx.clamp(min=0)
        span = hi - lo
        s = torch.where(torch.isinf(span), hi / 255 - lo / 255, span / 255)  # finite ends, span overflows
        s = torch.where(s == 0, torch.ones_like(s), s)
        zf = torch.round(-128 - lo / s).clamp(-128, 127)
        z = zf.to(torch.int32)
        sv, zv = (s.reshape(-1, 1), zf.reshape(-1, 1)) if per_row else (s, zf)
        q = torch.round(xf / sv + zv).clamp(-128, 127)
    return q.to(torch.int8), s, z


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("per_row", [True, False])
@pytest.mark.parametrize("symmetric", [True, False])
def test_quantize_int8_bit_exact(dtype, per_row, symmetric):
    g = gen(11)
    R, C = 23, 333
    x = torch.randn(R, C, generator=g) * torch.logspace(-3, 3, R).reshape(-1, 1)
    x[3] = 0.0  # amax == 0 / span == 0 -> scale 1
    x[4] = x[4].abs() + 0.1  # one-sided (post-ReLU): lo = 0
    x[5] = -x[5].abs()
    x[6, :8] = torch.tensor([127.0, 2.5, -3.5, 0.5, -0.5, 1.5, -126.5, 126.5])  # s = 1: RNE ties
    x[6, 8:] = 0.0
    x = x.to(dtype)
    q, s, z = ops.quantize_int8(x, per_row, symmetric)
    q_ref, s_ref, z_ref = quantize_int8_formula(x, per_row, symmetric)
    shape = (R,) if per_row else ()
    assert q.dtype == torch.int8 and s.dtype == torch.float32 and z.dtype == torch.int32
    assert s.shape == shape and z.shape == shape
    assert torch.equal(s, s_ref) and torch.equal(z, z_ref)
    assert torch.equal(q, q_ref)
    if per_row and symmetric:
        assert q[6, :8].tolist() == [127, 2, -4, 0, 0, 2, -126, 126]


def quantize_int8_extremes():
    """Rows at fp32's edges: a range wider than fp32's max (hi - lo overflows, both ends finite),
    one end at the max, subnormal-only rows (the scale underflows to 0 and becomes 1)."""
    big = 3.0e38
    x = torch.zeros(6, 40)
    x[0, :4] = torch.tensor([big, -big, 1.0, -2.5e37])
    x[1, :3] = torch.tensor([big, 1.0, 2.0e38])  # one-sided: no overflow
    x[2, :3] = torch.tensor([-big, 1.0e38, 5.0])
    x[3, :2] = torch.tensor([1.0e-44, -3.0e-45])
    x[4, :1] = torch.tensor([1.4e-45])
    x[5] = torch.linspace(-1.7e38, 1.7e38, 40)
    return x


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("per_row", [True, False])
@pytest.mark.parametrize("symmetric", [True, False])
def test_quantize_int8_extremes(dtype, per_row, symmetric):
    x = quantize_int8_extremes()
    if dtype == torch.bfloat16:
        x = x[[0, 1, 2, 5]]  # bf16 holds 3e38 but not 1e-44
    x = x.to(dtype)
    q, s, z = ops.quantize_int8(x, per_row, symmetric)
    q_ref, s_ref, z_ref = quantize_int8_formula(x, per_row, symmetric)
    assert torch.equal(s, s_ref) and torch.equal(z, z_ref) and torch.equal(q, q_ref)
    assert bool(torch.isfinite(s).all()) and bool((s > 0).all())
    # every code dequantizes within half a step plus the roundings of x / s and of s
    # (tests/test_formats.py test_int8_range_wider_than_fp32_max; float64: the products stay finite)
    sv = s.double().reshape(-1, 1) if per_row else s.double()
    zv = z.double().reshape(-1, 1) if per_row else z.double()
    err = (sv * (q.double() - zv) - x.double()).abs()
    assert bool((err <= sv * (0.5 + 2**-14)).all())


def test_quantize_int8_rejects_nonfinite():
    for bad in (float("nan"), float("inf")):
        x = torch.randn(4, 32)
        x[2, 5] = bad
        with pytest.raises(RuntimeError, match="NaN or Inf"):
            ops.quantize_int8(x)


# =============================================================== fp8 ======
def fp8_formula(w, bs):
    wf = w.float()
    N, K = wf.shape
    nb = -(-K // bs)
    amax = torch.nn.functional.pad(wf.abs(), (0, nb * bs - K)).view(N, nb, bs).amax(2)
    scale = torch.where(amax == 0, torch.ones_like(amax), amax / 448)
    full = scale.repeat_interleave(bs, 1)[:, :K]
    return (wf / full).clamp(-448, 448).to(torch.float8_e4m3fn), scale


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("N,K,bs", [(5, 100, 32), (37, 4096, 128), (3, 48, 256), (9, 400, 48), (2, 16, 16)])
def test_quantize_fp8_block_matches_torch_cast(dtype, N, K, bs):
    g = gen(N * K + bs)
    w = torch.randn(N, K, generator=g) * torch.logspace(-4, 2, K)  # wide range: e4m3 subnormals too
    w[0, : min(K, bs)] = 0.0  # an all-zero block -> scale 1, codes 0
    w = w.to(dtype)
    q, s = ops.quantize_fp8_block(w, bs)
    q_ref, s_ref = fp8_formula(w, bs)
    assert q.dtype == torch.float8_e4m3fn and q.shape == (N, K)
    assert s.dtype == torch.float32 and s.shape == (N, -(-K // bs))
    assert torch.equal(s, s_ref)
    assert torch.equal(q.view(torch.uint8), q_ref.view(torch.uint8))
    assert s[0, 0].item() == 1.0

    for od in (None, torch.float16, torch.bfloat16):
        d = ops.dequantize_fp8_block(q, s, bs, od)
        want = (q.float() * s.repeat_interleave(bs, 1)[:, :K]).to(od or torch.float32)
        assert torch.equal(d, want)


def test_quantize_fp8_block_rejects_nonfinite():
    w = torch.randn(3, 64)
    w[1, 1] = float("inf")
    with pytest.raises(RuntimeError, match="NaN or Inf"):
        ops.quantize_fp8_block(w, 32)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("M,K,bs", [(1, 128, 128), (37, 4096, 128), (5, 100, 32), (2, 16, 16)])
def test_quantize_fp8_act_is_the_block_rule_with_column_major_scales(dtype, M, K, bs):
    """quantize_fp8_act = quantize_fp8_block's rule (same codes, same scales)
    with the scale stored column-major ([M, nb], strides (1, M))."""
    g = gen(M * K + bs + 7)
    x = (torch.randn(M, K, generator=g) * torch.logspace(-4, 2, K)).to(dtype)
    x[0, : min(K, bs)] = 0.0  # zero block -> scale 1
    q, s = ops.quantize_fp8_act(x, bs)
    q_ref, s_ref = fp8_formula(x, bs)
    nb = -(-K // bs)
    assert q.dtype == torch.float8_e4m3fn and q.shape == (M, K)
    assert s.dtype == torch.float32 and s.shape == (M, nb) and s.stride() == (1, M)
    assert torch.equal(s, s_ref) and s[0, 0].item() == 1.0
    assert torch.equal(q.view(torch.uint8), q_ref.view(torch.uint8))


def test_quantize_fp8_act_nonfinite_blocks_and_empty_batch():
    """Online op: no error for NaN / Inf, but the block's scale is NaN and its
    codes are NaN (0x7f), so whatever uses them is NaN; other blocks unharmed."""
    x = torch.randn(3, 256)
    x[1, 5] = float("nan")
    x[2, 200] = float("-inf")
    q, s = ops.quantize_fp8_act(x, 128)
    q8 = q.view(torch.uint8)
    assert torch.isnan(s[1, 0]) and torch.isnan(s[2, 1])
    assert (q8[1, :128] == 0x7F).all() and (q8[2, 128:] == 0x7F).all()
    clean = torch.ones(3, 2, dtype=torch.bool)
    clean[1, 0] = clean[2, 1] = False
    assert torch.isfinite(s[clean]).all()
    x_ok = x.clone()
    x_ok[1, :128] = 0.0
    x_ok[2, 128:] = 0.0
    q_ref, s_ref = fp8_formula(x_ok, 128)
    assert torch.equal(q8[0], q_ref.view(torch.uint8)[0]) and torch.equal(s[0], s_ref[0])
    assert torch.equal(q8[1, 128:], q_ref.view(torch.uint8)[1, 128:])
    q0, s0 = ops.quantize_fp8_act(torch.zeros(0, 256), 128)
    assert q0.shape == (0, 256) and s0.shape == (0, 2)


def test_quantize_fp8_act_bad_inputs():
    with pytest.raises(RuntimeError, match="block_size"):
        ops.quantize_fp8_act(torch.randn(2, 64), 100)
    with pytest.raises(RuntimeError, match="x must be float32, float16 or bfloat16"):
        ops.quantize_fp8_act(torch.ones(2, 64, dtype=torch.int8), 64)
    with pytest.raises(RuntimeError, match="contiguous"):
        ops.quantize_fp8_act(torch.randn(64, 4).t(), 16)
    with pytest.raises(RuntimeError, match="2-D|dim"):
        ops.quantize_fp8_act(torch.randn(64), 16)
    with pytest.raises(RuntimeError, match="K > 0"):
        ops.quantize_fp8_act(torch.randn(3, 0), 16)


def gemv_bound(x, w_deq, y64, n_chain, out_dtype, bias=None, post_scale=1.0):
    """|y - y64| bound for an fp32 accumulation whose longest rounding chain has
    n_chain steps, an optional fp32 post-scale and bias add, and the final cast."""
    S = (x.double().abs() @ w_deq.double().abs().T) * abs(post_scale)
    e = gamma(n_chain) * S
    if bias is not None:
        e = e + U32 * (y64.abs() + e)
    return e + UNIT[out_dtype] * (y64.abs() + e) + TINY[out_dtype]


@pytest.mark.parametrize("xdtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("M,K,bs", [(1, 4096, 128), (3, 144, 48), (16, 512, 16), (33, 272, 256), (5, 1040, 128)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_fp8_block_gemv(xdtype, M, K, bs, with_bias):
    g = gen(M * K + bs)
    N = 37
    w = torch.randn(N, K, generator=g)
    q, s = ops.quantize_fp8_block(w, bs)
    x = torch.randn(M, K, generator=g).to(xdtype)
    bias = torch.randn(N, generator=g).to(xdtype) if with_bias else None
    y = ops.fp8_block_gemv(x, q, s, bs, bias)
    assert y.dtype == xdtype and y.shape == (M, N)
    w_deq = ops.dequantize_fp8_block(q, s, bs)
    y64 = x.double() @ w_deq.double().T + (0 if bias is None else bias.double())
    nb = -(-K // bs)
    # chain: K products summed (at most K adds), a product by the scale and an
    # add per block, the bias add; gamma(K + 2 nb + 1) covers it.
    bound = gemv_bound(x, w_deq, y64, K + 2 * nb + 1, xdtype, bias)
    assert bool(((y.double() - y64).abs() <= bound).all())
    assert torch.equal(y, ops.fp8_block_gemv(x, q, s, bs, bias, path="cpu"))


# ============================================================= nvfp4 ======
E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def e2m1_nearest_even(v):
    """E2M1 codes by brute force: nearest magnitude, ties to the even code;
    the sign bit is kept: a negative value that rounds to zero is code 8 (-0)."""
    d = (v.double().abs().unsqueeze(-1) - E2M1.double()).abs()  # exact in float64
    best = d.min(-1, keepdim=True).values
    cand = d == best
    # among the nearest codes prefer an even one (there is exactly one at a tie)
    even = cand & (torch.arange(8) % 2 == 0)
    mag = torch.where(even.any(-1), even.float().argmax(-1), cand.float().argmax(-1))
    neg = torch.signbit(v)
    return (mag | (neg.long() << 3)).to(torch.uint8)


def nvfp4_formula(w):
    wf = w.float()
    N, K = wf.shape
    amax = wf.abs().amax()
    g = amax / (448 * 6)
    g = torch.where(g == 0, torch.ones_like(g), g)
    bamax = wf.view(N, K // 16, 16).abs().amax(2)
    bs = torch.clamp(bamax / 6 / g, max=448).to(torch.float8_e4m3fn)
    d = (bs.float() * g).repeat_interleave(16, 1)
    v = torch.clamp(wf / torch.where(d == 0, torch.ones_like(d), d), -6, 6)
    codes = torch.where(d == 0, torch.zeros_like(v, dtype=torch.uint8), e2m1_nearest_even(v))
    packed = codes[:, 0::2] | (codes[:, 1::2] << 4)
    return packed, bs, g


def unpack_codes(packed):
    return torch.stack((packed & 0xF, packed >> 4), -1).reshape(packed.shape[0], -1)


@pytest.mark.parametrize("out_dtype", [torch.float32, torch.bfloat16])
def test_e4m3_decode_all_256_codes_bit_exact(out_dtype):
    """The CPU kernels decode e4m3 with F16C or a 256-entry table (fp8_cpu.cpp
    decode_e4m3_row): every code, NaNs and subnormals included, must give
    torch's value to the bit (scale 1: the multiply is exact); the GEMV shares
    the decode. test_decode_paths_agree_bit_for_bit covers the other form."""
    codes = torch.arange(256, dtype=torch.uint8).view(torch.float8_e4m3fn).reshape(2, 128)
    got = ops.dequantize_fp8_block(codes, torch.ones(2, 1), 128, out_dtype)
    want = codes.to(torch.float32).to(out_dtype)
    view = torch.int32 if out_dtype == torch.float32 else torch.int16
    nan = want.isnan()
    assert int(nan.sum()) == 2 and torch.equal(got.isnan(), nan)  # codes 0x7F, 0xFF
    if out_dtype == torch.float32:  # NaN bits too (bf16 NaN rounding is c10's, not the decode's)
        nan = torch.zeros_like(nan)
    assert torch.equal(got.view(view)[~nan], want.view(view)[~nan])
    # the GEMV over an identity-like x reads each finite code back
    finite = torch.arange(256).reshape(2, 128) % 128 != 127
    w = torch.where(finite, codes.float(), torch.zeros(())).to(torch.float8_e4m3fn)
    x = torch.zeros(128, 128, dtype=torch.float32)
    x[torch.arange(128), torch.arange(128)] = 1.0
    y = ops.fp8_block_gemv(x.to(torch.bfloat16), w, torch.ones(2, 1), 128, None, "auto")
    assert torch.equal(y.float(), w.float().t().to(torch.bfloat16).float())


_DECODE_CASES = r"""
import sys, torch
torch.ops.load_library(sys.argv[1])
ops = torch.ops.torchquant
g = torch.Generator().manual_seed(7)
out = {}
codes = torch.arange(256, dtype=torch.uint8).view(torch.float8_e4m3fn).reshape(2, 128)
out["fp8_deq_all"] = ops.dequantize_fp8_block(codes, torch.rand(2, 1, generator=g) + 0.5, 128, torch.float32)
for K in (200, 208, 4096):  # 200: a tail of 8 codes after the 16-code groups (dequantize only)
    w = torch.randn(37, K, generator=g)
    q, s = ops.quantize_fp8_block(w, 64)
    out[f"fp8_deq_{K}"] = ops.dequantize_fp8_block(q, s, 64, torch.float32)
    if K % 16 == 0:
        x = torch.randn(5, K, generator=g).to(torch.bfloat16)
        out[f"fp8_gemv_{K}"] = ops.fp8_block_gemv(x, q, s, 64, None, "auto")
for K in (48, 4096):  # 48: three 16-code blocks, the last one alone
    w = torch.randn(37, K, generator=g)
    p, sc, gs = ops.quantize_nvfp4(w)
    x = torch.randn(5, K, generator=g).to(torch.bfloat16)
    out[f"nvfp4_gemv_{K}"] = ops.nvfp4_gemv(x, p, sc, gs, None, "auto")
# The 2:4 expansions (sparse24_gemv's fp32 one, sparse24_int8_matmul's int16 one) have an
# AVX2 form too. Meta bytes at random cover every nibble, the pos0 >= pos1 ones outside the
# contract included (the ops trust meta; both forms give the same bits for them as well).
# The outputs are finite (checked), so the bits compared carry the sums.
# K = 36 / 520 / 4100: tails of 4 elements after the 16-element steps, 520 across a chunk.
for K in (36, 520, 4100):
    meta = torch.randint(0, 256, (19, (K + 7) // 8), generator=g, dtype=torch.uint8)
    for dt in (torch.float16, torch.bfloat16):
        # magnitudes in [1, 2): two such values OR-ed (the nibbles with pos0 == pos1) stay
        # finite, so the outputs compared are numbers, not NaN patterns
        v = ((1 + 0.9 * torch.rand(19, K // 2, generator=g)) * (torch.randint(0, 2, (19, K // 2), generator=g) * 2 - 1)).to(dt)
        x = torch.randn(5, K, generator=g).to(dt)
        out[f"sp24_gemv_{dt}_{K}"] = ops.sparse24_gemv(x, v, meta, None, "auto")
    vq = torch.randint(-128, 128, (19, K // 2), generator=g, dtype=torch.int8)
    aq = torch.randint(-128, 128, (5, K), generator=g, dtype=torch.int8)
    assert all(torch.isfinite(out[f"sp24_gemv_{d}_{K}"]).all() for d in (torch.float16, torch.bfloat16))
    out[f"sp24_int8_{K}"] = ops.sparse24_int8_matmul(aq, torch.ones(5), None, vq, meta, torch.ones(19), None,
                                                     None, torch.float32, "auto")
torch.save(out, sys.argv[2])
"""


def test_decode_paths_agree_bit_for_bit(tmp_path):
    """The e4m3 / e2m1 decodes and the 2:4 expansions have an AVX2 (+ F16C) form and a
    table / scalar form (cpu_common.h cpu_has_f16c_path); TORCHQUANT_CPU_NO_F16C=1 forces
    the latter. Both must give the same bits: dequantize over all 256 codes (NaN codes take
    the table inside the F16C form), the GEMVs over K with decode tails, and the 2:4 GEMVs
    over every meta nibble."""
    import subprocess
    import sys

    lib = next(iter(glob.glob(os.path.join(ROOT, "torchquant", "_C*.so"))))
    script = tmp_path / "decode_cases.py"
    script.write_text(_DECODE_CASES)
    results = {}
    for name, env_extra in (("f16c", {}), ("table", {"TORCHQUANT_CPU_NO_F16C": "1"})):
        env = dict(os.environ, **env_extra)
        if not env_extra:
            env.pop("TORCHQUANT_CPU_NO_F16C", None)
        dst = tmp_path / f"{name}.pt"
        subprocess.run([sys.executable, str(script), lib, str(dst)], check=True, env=env, timeout=300)
        results[name] = torch.load(dst)
    assert results["f16c"].keys() == results["table"].keys()
    for key, a in results["f16c"].items():
        b = results["table"][key]
        view = torch.int32 if a.dtype == torch.float32 else torch.int16
        assert torch.equal(a.view(view), b.view(view)), key


def test_e2m1_decode_all_256_bytes_bit_exact():
    """Both nibbles of every byte through dequantize_nvfp4 (block scale e4m3 1.0,
    global 1.0): the E2M1 table values to the bit, -0.0 for code 8 included."""
    packed = torch.arange(256, dtype=torch.uint8).reshape(1, 256)
    scale = torch.full((1, 32), 1.0).to(torch.float8_e4m3fn)
    got = ops.dequantize_nvfp4(packed, scale, torch.ones(()), torch.float32)
    table = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])
    b = torch.arange(256)
    want = torch.stack((table[b & 0xF], table[b >> 4]), -1).reshape(1, 512)
    assert torch.equal(got.view(torch.int32), want.view(torch.int32))


def test_nvfp4_e2m1_ties_and_packing():
    ties = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
    tie_codes = [0, 2, 2, 4, 4, 6, 6]  # ties to the even code
    w = torch.zeros(3, 32)
    # Row 0: block 0 has amax 6 and block 1 holds the tensor amax 2688 = 448 * 6,
    # so global = 1 and block 0's scale is e4m3(1) = 1: q = e2m1_rne(w) exactly.
    w[0, :16] = torch.tensor([6.0] + ties + [-t for t in ties] + [-6.0])
    w[0, 16] = 2688.0
    w[0, 17] = -2688.0 / 2  # 1344 / 448 = 3 -> code 13 (-3)
    # Row 1: just above / below each tie point.
    up = torch.nextafter(torch.tensor(ties), torch.tensor(math.inf))
    down = torch.nextafter(torch.tensor(ties), torch.tensor(0.0))
    w[1, :16] = torch.cat([torch.tensor([6.0]), up, -down, torch.tensor([0.0])])
    # Row 2 block 0: all zero -> scale 0, codes 0; block 1: tiny negatives
    # that round to zero keep their sign -> code 8 (-0).
    w[2, 16:] = torch.tensor([-6.0] + [-0.2] * 15)
    packed, bs, g = ops.quantize_nvfp4(w)
    assert packed.dtype == torch.uint8 and packed.shape == (3, 16)
    assert bs.dtype == torch.float8_e4m3fn and bs.shape == (3, 2)
    assert g.dtype == torch.float32 and g.shape == () and g.item() == 1.0
    assert bs.float().tolist() == [[1.0, 448.0], [1.0, 0.0], [0.0, 1.0]]
    codes = unpack_codes(packed)
    assert codes[0, :16].tolist() == [7] + tie_codes + [c | 8 for c in tie_codes] + [15]
    assert codes[0, 16:18].tolist() == [7, 13] and codes[0, 18:].sum() == 0
    # above a tie -> the upper code, below -> the lower one (negated below)
    assert codes[1, 1:8].tolist() == [1, 2, 3, 4, 5, 6, 7]
    assert codes[1, 8:15].tolist() == [8, 9, 10, 11, 12, 13, 14]
    assert codes[2].tolist() == [0] * 16 + [15] + [8] * 15
    # Packing: element 2j in the LOW nibble of byte j.
    assert packed[0, 0].item() == 7 | (0 << 4)  # (6, 0.25)
    assert packed[0, 1].item() == 2 | (2 << 4)  # (0.75, 1.25)
    assert packed[0, 8].item() == 7 | (13 << 4)  # (2688, -1344)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("N,K", [(1, 16), (37, 272), (8, 4096)])
def test_quantize_nvfp4_bit_exact(dtype, N, K):
    g = gen(N + K)
    w = torch.randn(N, K, generator=g) * torch.logspace(-3, 1, K)
    w[0, :16] = 0.0  # zero block
    if K > 32:
        w[-1, 16:32] *= 1e-6  # block scale underflows e4m3 -> 0, codes 0
    w = w.to(dtype)
    packed, bs, gs = ops.quantize_nvfp4(w)
    p_ref, bs_ref, g_ref = nvfp4_formula(w)
    assert torch.equal(gs, g_ref)
    assert torch.equal(bs.view(torch.uint8), bs_ref.view(torch.uint8))
    assert torch.equal(packed, p_ref)

    vals = E2M1.repeat(2)
    vals[8:] = -vals[8:]
    for od in (None, torch.float16, torch.bfloat16):
        d = ops.dequantize_nvfp4(packed, bs, gs, od)
        want = ((vals[unpack_codes(packed).long()] * bs.float().repeat_interleave(16, 1)) * gs).to(od or torch.float32)
        assert torch.equal(d, want)


def test_quantize_nvfp4_all_zero():
    packed, bs, g = ops.quantize_nvfp4(torch.zeros(2, 32))
    assert g.item() == 1.0 and packed.sum() == 0 and bs.view(torch.uint8).sum() == 0


@pytest.mark.parametrize("xdtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("M,K", [(1, 4096), (4, 16), (16, 784), (33, 528)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_nvfp4_gemv(xdtype, M, K, with_bias):
    g = gen(M * K)
    N = 37
    w = torch.randn(N, K, generator=g)
    packed, bs, gs = ops.quantize_nvfp4(w)
    x = torch.randn(M, K, generator=g).to(xdtype)
    bias = torch.randn(N, generator=g).to(xdtype) if with_bias else None
    y = ops.nvfp4_gemv(x, packed, bs, gs, bias)
    assert y.dtype == xdtype and y.shape == (M, N)
    w_deq = ops.dequantize_nvfp4(packed, bs, gs)  # (e2m1 * bs) * g, one rounding
    codes = unpack_codes(packed).long()
    vals = torch.cat([E2M1, -E2M1])[codes] * bs.float().repeat_interleave(16, 1)  # exact
    gsc = gs.double().item()
    y64 = (x.double() @ vals.double().T) * gsc + (0 if bias is None else bias.double())
    # chain: K adds, the global-scale multiply, the bias add.
    bound = gemv_bound(x, vals, y64, K + 2, xdtype, bias, post_scale=gsc)
    assert bool(((y.double() - y64).abs() <= bound).all())
    # global_scale as a one-element 1-D tensor reads the same value
    assert torch.equal(y, ops.nvfp4_gemv(x, packed, bs, gs.reshape(1), bias, path="cpu"))
    assert w_deq.shape == (N, K)


def test_gemv_results_do_not_depend_on_thread_count():
    g = gen(5)
    w = torch.randn(64, 1024, generator=g)
    x = torch.randn(9, 1024, generator=g).half()
    q, s = ops.quantize_fp8_block(w, 128)
    p, bs, gs = ops.quantize_nvfp4(w)
    a, wq = rand_int8((9, 1024), g), rand_int8((64, 1024), g)
    sc = torch.rand(64) + 0.5
    n = torch.get_num_threads()
    try:
        outs = []
        for t in (1, n):
            torch.set_num_threads(t)
            outs.append((ops.fp8_block_gemv(x, q, s, 128), ops.nvfp4_gemv(x, p, bs, gs),
                         ops.int8_matmul(a, torch.ones(9), None, wq, sc)))
    finally:
        torch.set_num_threads(n)
    for u, v in zip(*outs):
        assert torch.equal(u, v)


# ============================================================== 2:4 =======
SPARSE_DTYPES = [torch.int8, torch.float16, torch.bfloat16, torch.float32]


def prune24_formula(w):
    N, K = w.shape
    mag = w.float().abs().view(N, K // 4, 4)
    idx = torch.sort(mag, dim=-1, descending=True, stable=True).indices[..., :2]
    mask = torch.zeros_like(mag, dtype=torch.bool).scatter_(-1, idx, True).view(N, K)
    return torch.where(mask, w, torch.zeros_like(w)), mask


@pytest.mark.parametrize("dtype", SPARSE_DTYPES)
def test_prune24_ties_keep_lower_index(dtype):
    groups = [
        ([1, -1, 1, 1], [1, 1, 0, 0]),
        ([0, 0, 0, 0], [1, 1, 0, 0]),
        ([2, 1, 2, 2], [1, 0, 1, 0]),
        ([-3, 3, 5, -5], [0, 0, 1, 1]),
        ([1, 2, 3, 4], [0, 0, 1, 1]),
        ([4, 3, 2, 1], [1, 1, 0, 0]),
        ([0, 0, 0, 1], [1, 0, 0, 1]),
        ([-2, 0, 0, 2], [1, 0, 0, 1]),
    ]
    w = torch.tensor([v for v, _ in groups], dtype=torch.float32).reshape(2, -1).to(dtype)
    mask_want = torch.tensor([m for _, m in groups], dtype=torch.bool).reshape(2, -1)
    pruned, mask = ops.prune24(w)
    assert mask.dtype == torch.bool and pruned.dtype == dtype
    assert torch.equal(mask, mask_want)
    assert torch.equal(pruned, torch.where(mask_want, w, torch.zeros_like(w)))
    if dtype == torch.int8:  # |-128| = 128 is the largest magnitude
        _, m = ops.prune24(torch.tensor([[-128, 127, 127, -128]], dtype=torch.int8))
        assert m.tolist() == [[True, False, False, True]]


@pytest.mark.parametrize("dtype", SPARSE_DTYPES)
def test_prune24_random(dtype):
    g = gen(3)
    if dtype == torch.int8:
        w = rand_int8((19, 100), g, -4, 4)  # many ties
    else:
        w = torch.randint(-3, 4, (19, 100), generator=g).float().mul(0.5).to(dtype)
    pruned, mask = ops.prune24(w)
    p_ref, m_ref = prune24_formula(w)
    assert torch.equal(mask, m_ref) and torch.equal(pruned, p_ref)


def test_prune24_rejects_nonfinite():
    w = torch.randn(2, 8)
    w[0, 3] = float("nan")
    with pytest.raises(RuntimeError, match="NaN or Inf"):
        ops.prune24(w)


def meta_formula(w):
    """Canonical compress24 metadata and values, group by group."""
    N, K = w.shape
    G = K // 4
    meta = torch.zeros(N, -(-K // 8), dtype=torch.uint8)
    values = torch.zeros(N, K // 2, dtype=w.dtype)
    for n in range(N):
        for gi in range(G):
            grp = w[n, 4 * gi : 4 * gi + 4]
            nz = [i for i in range(4) if grp[i].item() != 0]
            zeros = [i for i in range(4) if i not in nz]
            pos = sorted(nz + zeros[: 2 - len(nz)])
            values[n, 2 * gi], values[n, 2 * gi + 1] = grp[pos[0]], grp[pos[1]]
            nib = pos[0] | (pos[1] << 2)
            meta[n, gi // 2] |= nib << (4 * (gi % 2))
    return values, meta


@pytest.mark.parametrize("dtype", SPARSE_DTYPES)
@pytest.mark.parametrize("K", [4, 8, 12, 20, 64])
def test_compress24_canonical_and_round_trip(dtype, K):
    g = gen(K)
    N = 6
    w = torch.randint(-5, 6, (N, K), generator=g).to(torch.float32)
    w = prune24_formula(w)[0]
    w[0] = 0.0  # groups with no nonzero
    w[1, ::4] = 0.0  # fewer nonzeros in every group
    w[1, 1::4] = 0.0
    w = w.to(dtype)
    values, meta = ops.compress24(w)
    assert values.dtype == dtype and values.shape == (N, K // 2)
    assert meta.dtype == torch.uint8 and meta.shape == (N, -(-K // 8))
    v_ref, m_ref = meta_formula(w)
    assert torch.equal(meta, m_ref)
    assert torch.equal(values, v_ref)
    assert torch.equal(ops.decompress24(values, meta), w)


@pytest.mark.parametrize("dtype", SPARSE_DTYPES)
def test_compress24_round_trip_large(dtype):
    g = gen(17)
    w = torch.randn(64, 1028, generator=g) * 50
    w = prune24_formula(w.to(dtype))[0]
    values, meta = ops.compress24(w)
    back = ops.decompress24(values, meta)
    assert torch.equal(back, w)


def test_compress24_rejects_three_nonzeros_naming_the_first():
    w = torch.zeros(8, 32)
    w[5, 0:3] = 1.0  # row 5, group 0
    w[1, 12:16] = 2.0  # row 1, group 3: first in row-major order
    with pytest.raises(RuntimeError, match=r"row 1, group 3 .*4 nonzeros"):
        ops.compress24(w)
    w[1] = 0.0
    with pytest.raises(RuntimeError, match=r"row 5, group 0 .*3 nonzeros"):
        ops.compress24(w)


def test_decompress24_rejects_bad_nibbles():
    values = torch.randn(3, 8)
    good = ops.compress24(prune24_formula(torch.randn(3, 16))[0])[1]
    # nibble = pos0 | pos1 << 2: 0x0 is (0, 0), 0x5 (1, 1), 0x1 (1, 0), 0xE (2, 3) is valid
    for nib in (0x0, 0x5, 0x1, 0xE):
        meta = good.clone()
        meta[2, 1] = (meta[2, 1] & 0xF0) | nib  # row 2, group 2 (low nibble of byte 1)
        if (nib & 3) < (nib >> 2):
            ops.decompress24(values, meta)
            continue
        with pytest.raises(RuntimeError, match=r"row 2, group 2 .*nibble"):
            ops.decompress24(values, meta)


# ======================================================== bad inputs ======
def test_bad_inputs_raise():
    a = torch.zeros(4, 32, dtype=torch.int8)
    one = torch.ones(1)
    with pytest.raises(RuntimeError, match="not a CPU path"):
        ops.int8_matmul(a, one, None, a, one, path="gemv")
    with pytest.raises(RuntimeError, match="empty operand"):
        ops.int8_matmul(a[:0], one, None, a, one)
    with pytest.raises(RuntimeError, match="must be Char"):
        ops.int8_matmul(a.float(), one, None, a, one)
    x = torch.zeros(2, 40, dtype=torch.half)
    with pytest.raises(RuntimeError, match="multiple of 16"):
        ops.fp8_block_gemv(x, torch.zeros(3, 40).to(torch.float8_e4m3fn), torch.ones(3, 1), 128)
    with pytest.raises(RuntimeError, match="not a CPU path"):
        ops.nvfp4_gemv(torch.zeros(2, 32, dtype=torch.half), torch.zeros(3, 16, dtype=torch.uint8),
                       torch.zeros(3, 2).to(torch.float8_e4m3fn), torch.ones(()), path="mma")
    with pytest.raises(RuntimeError, match="multiple of 16"):
        ops.quantize_nvfp4(torch.randn(2, 40))
    with pytest.raises(RuntimeError, match="block_size"):
        ops.quantize_fp8_block(torch.randn(2, 40), 40)
    with pytest.raises(RuntimeError, match="non-empty"):
        ops.quantize_int8(torch.zeros(0, 4))
    with pytest.raises(RuntimeError, match="multiple of 4"):
        ops.prune24(torch.randn(2, 6))
    with pytest.raises(RuntimeError, match="meta must be"):
        ops.decompress24(torch.zeros(2, 4), torch.zeros(2, 2, dtype=torch.uint8))


# ============================================================ timing ======
def best_of(f, reps=3):
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return min(ts)


def test_int8_matmul_speed_m16_4096():
    g = gen(0)
    M, N, K = 16, 4096, 4096
    a, w = rand_int8((M, K), g), rand_int8((N, K), g)
    a_s, w_s = torch.rand(M, generator=g), torch.rand(N, generator=g)
    t = best_of(lambda: ops.int8_matmul(a, a_s, None, w, w_s))
    # Random (finite) encoded weights: quantizing 16M floats would dominate the test time.
    x = torch.randn(M, K, generator=g).half()
    q = torch.randn(N, K, generator=g).to(torch.float8_e4m3fn)
    s = torch.rand(N, K // 128, generator=g)
    p = torch.randint(0, 256, (N, K // 2), generator=g, dtype=torch.uint8)
    bs = torch.rand(N, K // 16, generator=g).to(torch.float8_e4m3fn)
    gs = torch.tensor(0.01)
    t8 = best_of(lambda: ops.fp8_block_gemv(x, q, s))
    t4 = best_of(lambda: ops.nvfp4_gemv(x, p, bs, gs))
    print(f"\nM=16 N=K=4096 on {torch.get_num_threads()} threads: int8_matmul {t * 1e3:.1f} ms, "
          f"fp8_block_gemv {t8 * 1e3:.1f} ms, nvfp4_gemv {t4 * 1e3:.1f} ms")
    assert t < 1.0
