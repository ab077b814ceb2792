"""int8_matmul and quantize_int8 on CUDA, against the CPU op and exact references.

The integer core of int8_matmul is exact and the fp32 epilogue runs the same
operations in the same order on both backends, so every comparison against
the CPU op is bit-exact (torch.equal), for every forced path, odd shape,
unaligned K or pointer, and epilogue combination. quantize_int8 is bit-exact
too. Before each CUDA launch the caching allocator is poisoned with NaN, so an
output element a kernel forgets to write fails the comparison.
"""

import math

import pytest
import torch

import torchquant  # noqa: F401  (registers the ops)
from torchquant import reference as ref
from torchquant import report

from conftest import HAS_CUDA, kernels_launched, poison_cuda, sm_count  # noqa: F401

pytestmark = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")

ops = torch.ops.torchquant
KERNELS = ["auto", "gemv", "mma"]
OUT_DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def _sm80():
    return HAS_CUDA and torch.cuda.get_device_capability() >= (8, 0)


needs_sm80 = pytest.mark.skipif(not _sm80(), reason="int8 CUDA kernels need sm_80+")


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _i8(shape, g, lo=-128, hi=127):
    return torch.randint(lo, hi + 1, shape, generator=g, dtype=torch.int8)


def _scale(n, g):
    # positive, over two decades, never 1 (1 would hide a missing multiply);
    # small enough that |y| stays far inside fp16 range for K <= 4144
    return (torch.rand(n, generator=g) * 0.9 + 0.1) * 10.0 ** torch.randint(-4, -2, (n,), generator=g).float()


def _poison():
    """NaN-fill both caching-allocator pools before a launch.

    conftest.poison_cuda() fills one large block, which only serves later
    allocations from the large pool (> 1 MiB); outputs of 1 MiB or less come
    from the small pool's 2 MiB segments, so those are filled here as well.
    """
    poison_cuda()
    small = [torch.empty(1 << 19, dtype=torch.uint8, device="cuda").fill_(0xFF) for _ in range(8)]
    del small


def _cuda(t):
    return None if t is None else t.cuda()


def _cpu(t):
    return None if t is None else t.cpu()


def run_cuda(a_q, a_scale, a_zero, w_q, w_scale, w_colsum=None, bias=None, out_dtype=None, kernel="auto"):
    args = [_cuda(a_q), _cuda(a_scale), _cuda(a_zero), _cuda(w_q), _cuda(w_scale), _cuda(w_colsum), _cuda(bias)]
    _poison()
    y = ops.int8_matmul(*args, out_dtype, kernel)
    torch.cuda.synchronize()
    return y.cpu()


def run_cpu(a_q, a_scale, a_zero, w_q, w_scale, w_colsum=None, bias=None, out_dtype=None):
    args = [_cpu(a_q), _cpu(a_scale), _cpu(a_zero), _cpu(w_q), _cpu(w_scale), _cpu(w_colsum), _cpu(bias)]
    return ops.int8_matmul(*args, out_dtype, "auto")


def assert_bitexact(got, want, what=""):
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, want.shape, got.dtype)
    assert bool(torch.isfinite(got).all()), f"{what}: non-finite output (an unwritten element reads NaN)"
    if not torch.equal(got, want):
        d = (got.double() - want.double()).abs()
        i = int(d.argmax())
        r, c = divmod(i, got.shape[1])
        raise AssertionError(f"{what}: {int((d > 0).sum())} elements differ; worst at ({r}, {c}): "
                             f"got {got[r, c].item()} want {want[r, c].item()}")


# -------------------------------------------------------- integer core ----
M_LIST = list(range(1, 18)) + [31, 65, 129, 300]
N_LIST = [1, 7, 37, 129, 1000]
# 16/32/48/112/1040: 16-byte loaders with K tails inside a 64-wide k-tile;
# 100 and 7: K % 16 != 0 takes the word-granular fallback loaders.
K_LIST = [16, 32, 48, 112, 1024 + 16, 100, 7]


@needs_sm80
@pytest.mark.parametrize("K", K_LIST)
@pytest.mark.parametrize("N", N_LIST)
def test_integer_core_exact(N, K):
    """Scales 1, no zero point, no bias, fp32 out: y = float(acc), bit-exact vs CPU."""
    g = _gen(1000 * N + K)
    one = torch.ones(1)
    w_q = _i8((N, K), g)
    for M in M_LIST:
        a_q = _i8((M, K), g)
        want = run_cpu(a_q, one, None, w_q, one)
        acc = ref.int8_acc_ref(a_q, w_q)
        small = acc.abs() < 2**24  # float(acc) is acc itself there
        assert torch.equal(want.double()[small], acc.double()[small])
        for kern in KERNELS:
            got = run_cuda(a_q, one, None, w_q, one, kernel=kern)
            assert_bitexact(got, want, f"M={M} N={N} K={K} kernel={kern}")


# ------------------------------------------------------------- epilogue ----
def _epilogue_operands(M, N, K, seed, w_per_channel, a_per_token, zero, bias_dtype):
    g = _gen(seed)
    a_q = _i8((M, K), g)
    w_q = _i8((N, K), g)
    a_scale = _scale(M if a_per_token else 1, g)
    w_scale = _scale(N if w_per_channel else 1, g)
    if zero == "none":
        a_zero = None
    elif zero == "scalar":
        a_zero = torch.randint(-128, 128, (1,), generator=g, dtype=torch.int32)
    else:
        a_zero = torch.randint(-128, 128, (M,), generator=g, dtype=torch.int32)
    bias = None if bias_dtype is None else (torch.randn(N, generator=g) * 50).to(bias_dtype)
    return a_q, a_scale, a_zero, w_q, w_scale, bias


@needs_sm80
@pytest.mark.parametrize("M,N,K", [(5, 37, 112), (16, 130, 1040), (70, 129, 208), (300, 264, 100)])
@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
@pytest.mark.parametrize("bias_dtype", [None, torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("zero", ["none", "scalar", "per_row"])
def test_epilogue_combinations(M, N, K, out_dtype, bias_dtype, zero):
    for w_pc in (True, False):
        for a_pt in (True, False):
            a_q, sa, za, w_q, sw, bias = _epilogue_operands(M, N, K, M * 7 + N + K, w_pc, a_pt, zero, bias_dtype)
            want = run_cpu(a_q, sa, za, w_q, sw, None, bias, out_dtype)
            colsum = w_q.to(torch.int32).sum(1, dtype=torch.int32)
            for kern in KERNELS:
                what = f"{M}x{N}x{K} {out_dtype} bias={bias_dtype} zero={zero} w_pc={w_pc} a_pt={a_pt} {kern}"
                # w_colsum computed by the op and passed in: same result
                assert_bitexact(run_cuda(a_q, sa, za, w_q, sw, None, bias, out_dtype, kern), want, what)
                if za is not None:
                    assert_bitexact(run_cuda(a_q, sa, za, w_q, sw, colsum, bias, out_dtype, kern), want, what + " colsum")


@needs_sm80
@pytest.mark.parametrize("epi", ["1", "-1"])
@pytest.mark.parametrize("M", [1, 8, 13, 16])
@pytest.mark.parametrize("zero", ["none", "scalar", "per_row"])
def test_gemv_epilogue_operands_early(monkeypatch, epi, M, zero):
    """The gemv's tiles of <= 16 tokens load each output's epilogue operands (scales, zero point
    x column sum, bias) before the K loop when the grid is not split over K (N >= 16 * SMs);
    TORCHQUANT_INT8_GEMV_EPI=-1 loads them after it. Every epilogue form, bit-exact against the
    CPU op either way, with odd N (a partial last block) and a K tail."""
    monkeypatch.setenv("TORCHQUANT_INT8_GEMV_EPI", epi)
    N, K = 16 * sm_count() + 5, 1024 + 16
    for i, (bias_dtype, w_pc, a_pt) in enumerate([(None, True, True), (torch.bfloat16, False, True),
                                                   (torch.float32, True, False), (torch.float16, False, False)]):
        out_dtype = OUT_DTYPES[i % len(OUT_DTYPES)]
        a_q, sa, za, w_q, sw, bias = _epilogue_operands(M, N, K, M * 3 + i, w_pc, a_pt, zero, bias_dtype)
        want = run_cpu(a_q, sa, za, w_q, sw, None, bias, out_dtype)
        got = run_cuda(a_q, sa, za, w_q, sw, None, bias, out_dtype, "gemv")
        assert_bitexact(got, want, f"epi={epi} M={M} zero={zero} bias={bias_dtype} w_pc={w_pc} a_pt={a_pt}")


@needs_sm80
def test_epilogue_matches_float64_reference():
    """Independent of the CPU op: within int8_epilogue_bound of float64 over the dequantized operands."""
    M, N, K = 33, 200, 4096 + 48
    a_q, sa, za, w_q, sw, bias = _epilogue_operands(M, N, K, 7, True, True, "per_row", torch.bfloat16)
    g = _gen(77)
    sa = torch.rand(M, generator=g) * 1e-2 + 1e-3  # |y| ~ 1e2 .. 1e4: the product, not the bias, dominates
    sw = torch.rand(N, generator=g) * 1e-2 + 1e-3
    want = ref.int8_matmul_ref(a_q, sa, za, w_q, sw, None, bias)
    for od in OUT_DTYPES:
        bound = ref.int8_epilogue_bound(want, bias, od)
        for kern in KERNELS:
            got = run_cuda(a_q, sa, za, w_q, sw, None, bias, od, kern).double()
            assert bool(((got - want).abs() <= bound).all()), (od, kern)


# --------------------------------------- every tile config and split-K ----
def _dispatch_shapes():
    sms = sm_count() if HAS_CUDA else 132
    return [
        # auto -> gemv with split-K over blocks (N < 16 * SMs), K tail chunk; on sm_90 with the
        # wgmma module auto takes wgmma for both (int8_matmul.cu kGemvMaxM), path="gemv" the gemv
        ("gemv split-K", 3, 37, 4096 + 16),
        ("gemv 17..32 tokens", 29, 700, 2048),
        # on sm_90 with the wgmma module auto takes wgmma at M = 17..32 where N >= 6144, and at
        # M = 13..16 where K >= 8192 and N x K >= 10240 x 8192 (int8_matmul.cu
        # batch_prefers_wgmma); elsewhere the gemv's 32- / 16-token passes
        ("17..32 tokens, N >= 6144", 17, 6144 + 8, 160),
        ("13..16 tokens, wide and deep", 13, 10240 + 24, 8192),
        ("13..16 tokens, K < 8192", 16, 28672 + 8, 4096 + 16),
        # auto -> mma S with split-K (fewer 64x128 tiles than SMs)
        ("mma S split-K", 65, 129, 1040),
        ("mma S", 100, 128 * sms + 40, 96),
        # auto -> mma M: M >= 128, >= SMs tiles of 128x128, < 2*SMs of 128x256
        ("mma M", 256 + 3, 128 * sms, 192),
        # auto -> mma L: M >= 256 and >= 2*SMs tiles of 128x256
        ("mma L", 512 + 17, 256 * ((2 * sms + 4) // 5) - 8, 160),
    ]


@needs_sm80
@pytest.mark.parametrize("case", _dispatch_shapes(), ids=lambda c: c[0])
@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
def test_dispatch_buckets_exact(case, out_dtype):
    name, M, N, K = case
    a_q, sa, za, w_q, sw, bias = _epilogue_operands(M, N, K, M + N + K, True, True, "per_row", torch.float16)
    want = run_cpu(a_q, sa, za, w_q, sw, None, bias, out_dtype)
    for kern in KERNELS:
        if kern == "gemv" and M > 64:
            continue  # covered by test_forced_gemv_large_m; keeps this test fast
        assert_bitexact(run_cuda(a_q, sa, za, w_q, sw, None, bias, out_dtype, kern), want, f"{name} {kern}")


def _gemv_launches(fn):
    """Names of the int8 gemv kernels fn() launches, spaces removed."""
    return [n.replace(" ", "") for n in kernels_launched(fn) if "int8_gemv_kernel" in n]


def _check_gemv_loads(monkeypatch, knob, value, shape, forced_on, depth, tile, out_dtype, seed):
    """Runs path "gemv" on shape = (M, N, K, auto_takes_it) with knob = value ("" = unset) and
    checks the output bit-exact against the CPU op, one launch of the `tile`-token kernel
    (int8_gemv_kernel<tile / 8, ...>), and that its load depth is `depth` exactly when the
    knob forces it (value == forced_on) or auto should take it."""
    M, N, K, auto_takes = shape
    if value:
        monkeypatch.setenv(knob, value)
    else:
        monkeypatch.delenv(knob, raising=False)
    a_q, sa, za, w_q, sw, bias = _epilogue_operands(M, N, K, seed, True, True, "per_row", out_dtype)
    want = run_cpu(a_q, sa, za, w_q, sw, None, bias, out_dtype)
    out = {}
    names = _gemv_launches(lambda: out.setdefault("y", run_cuda(a_q, sa, za, w_q, sw, None, bias,
                                                                out_dtype, "gemv")))
    assert_bitexact(out["y"], want, f"{knob}={value!r} M={M} N={N} K={K}")
    assert len(names) == 1 and f"int8_gemv_kernel<{tile // 8}," in names[0], names
    ran = names[0].endswith(f",{depth}>(torchquant::int8::GemvParams)")
    assert ran == (value == forced_on or (value == "" and auto_takes)), (knob, value, M, N, K, names)


# (M, N, K, auto takes the deep loads): K tails that end inside the 48-chunk stride of the
# deep loop and inside a 64-byte chunk (K % 64 == 16 / 48), odd N, grids split over K
# (N < 16 * SMs: 3 x 9, 9 x 2, 4 x 28 blocks, all within one wave), and grids one block
# past a wave of 2 blocks per SM (N = 32 * SMs + 8, no split), where auto keeps 4 chunks at
# 17 chunks per row (2 per warp) and takes the deep loads at K = 8192 + 48 (17 per warp).
_DEEP_SHAPES = [(1, 37, 4096 + 16, True), (5, 130, 880, True), (8, 49, 14336, True),
                (3, None, 1024 + 48, False), (2, None, 8192 + 48, True)]


@needs_sm80
@pytest.mark.parametrize("deep", ["1", "-1", ""])
@pytest.mark.parametrize("shape", _DEEP_SHAPES, ids=lambda s: f"M{s[0]}_K{s[2]}")
def test_gemv_deep_loads(monkeypatch, deep, shape):
    """The 8-token gemv with 6 chunks of loads in flight per lane (auto on grids of at most
    2 blocks per SM or of >= 16 chunks per warp, TORCHQUANT_INT8_GEMV_DEEP=1 forced) and with
    4 (-1): bit-exact against the CPU op, and the variant asked for is the one launched."""
    M, N, K, auto_deep = shape
    N = 32 * sm_count() + 8 if N is None else N
    _check_gemv_loads(monkeypatch, "TORCHQUANT_INT8_GEMV_DEEP", deep, (M, N, K, auto_deep), "1", 6, 8,
                      torch.bfloat16, M * 7 + N + K)


# (M, N, K, auto takes 2 loads in flight): the 16-token tile (M = 9..16). Auto takes 2 for
# M >= 15 where every warp streams >= 16 chunks unsplit (N >= 16 * SMs: no K split; K > 8192
# - 64) and the grid has >= 12 blocks per SM ("deep": N = 16 * 12 * SMs + 8); K tails inside a
# 64-byte chunk (K % 64 == 16 / 48) and past the 2-chunk stride of the loop; a one-wave grid
# ("wave": N = 16 * SMs + 8), a grid split over K and a short K, where auto keeps 4.
_LOADS16_SHAPES = [(16, "deep", 8192 + 48, True), (15, "deep", 8192, True), (14, "deep", 8192, False),
                   (16, "wave", 8192 + 16, False), (12, "wave", 4096 + 16, False),
                   (10, 37, 8192 + 16, False), (13, 130, 880, False)]


@needs_sm80
@pytest.mark.parametrize("loads", ["2", "4", ""])
@pytest.mark.parametrize("shape", _LOADS16_SHAPES, ids=lambda s: f"M{s[0]}_N{s[1]}_K{s[2]}")
def test_gemv_loads16(monkeypatch, loads, shape):
    """The 16-token gemv with 2 chunks of loads in flight per lane (3 blocks per SM; auto at
    M >= 15 on long unsplit rows in deep grids, TORCHQUANT_INT8_GEMV_LOADS16=2 forced) and with
    4 (=4): bit-exact against the CPU op, and the variant asked for is the one launched."""
    M, N, K, auto2 = shape
    N = {"wave": 16 * sm_count() + 8, "deep": 16 * 12 * sm_count() + 8}.get(N, N)
    _check_gemv_loads(monkeypatch, "TORCHQUANT_INT8_GEMV_LOADS16", loads, (M, N, K, auto2), "2", 2, 16,
                      torch.float16, M * 5 + N + K)


@needs_sm80
def test_forced_gemv_large_m():
    """gemv is meant for M <= 32 but must be right for any M (32-row passes)."""
    a_q, sa, za, w_q, sw, bias = _epilogue_operands(300, 129, 1040, 11, True, True, "scalar", torch.float32)
    want = run_cpu(a_q, sa, za, w_q, sw, None, bias, torch.bfloat16)
    assert_bitexact(run_cuda(a_q, sa, za, w_q, sw, None, bias, torch.bfloat16, "gemv"), want)


@needs_sm80
@pytest.mark.parametrize("kern", KERNELS)
@pytest.mark.parametrize("offset", [1, 4, 8])
def test_unaligned_pointers(kern, offset):
    """a_q / w_q whose data starts off a 16-byte boundary take the fallback loaders."""
    M, N, K = 19, 45, 128
    g = _gen(offset)
    a_buf = _i8((M * K + offset,), g).cuda()
    w_buf = _i8((N * K + offset,), g).cuda()
    a_q = a_buf[offset:].view(M, K)
    w_q = w_buf[offset:].view(N, K)
    sa, sw = _scale(M, g), _scale(N, g)
    want = run_cpu(a_q, sa, None, w_q, sw, None, None, torch.float32)
    _poison()
    got = ops.int8_matmul(a_q, sa.cuda(), None, w_q, sw.cuda(), None, None, torch.float32, kern).cpu()
    assert_bitexact(got, want, f"offset {offset} {kern}")


@needs_sm80
@pytest.mark.parametrize("kern", KERNELS)
def test_k_max_extreme_values_exact(kern):
    """K = 65536 at the int32 edge: -128 x 127 everywhere, and a zero point near the limit."""
    K = 65536
    one = torch.ones(1)
    for M, N in [(3, 5), (40, 9)]:
        a_q = torch.full((M, K), -128, dtype=torch.int8)
        w_q = torch.full((N, K), 127, dtype=torch.int8)
        got = run_cuda(a_q, one, None, w_q, one, kernel=kern)
        assert bool((got == float(-128 * 127 * K)).all())  # -1065353216, exact in fp32
        # acc - z * colsum = -128*127*K - 127 * 127*K = -2122383360: still int32
        z = torch.full((1,), 127, dtype=torch.int32)
        want = run_cpu(a_q, one, z, w_q, one)
        assert float(want[0, 0]) == float(-128 * 127 * K - 127 * 127 * K)
        assert_bitexact(run_cuda(a_q, one, z, w_q, one, kernel=kern), want, f"K=65536 zero {kern}")
        # random extremes (+-128, +-127): exact against float64
        g = _gen(M)
        a_q = torch.where(torch.rand(M, K, generator=g) < 0.5, -128, 127).to(torch.int8)
        w_q = torch.where(torch.rand(N, K, generator=g) < 0.5, -128, 127).to(torch.int8)
        want = run_cpu(a_q, one, None, w_q, one)
        assert_bitexact(run_cuda(a_q, one, None, w_q, one, kernel=kern), want, f"K=65536 random {kern}")


# ----------------------------------------------------- the seed's table ----
@needs_sm80
@pytest.mark.slow
def test_seed_2048_table():
    """The seed's INT8 ladder at 2048^3 through every CUDA path: outputs equal the
    CPU op's bit for bit (so the error table is the CPU's), and the gated rows
    pass the derived per-element bound against float64 over the originals."""
    n = 2048
    a, w = report.seed_operands(n, n, n)
    aq_s, sa_s, _ = ops.quantize_int8(a, False, True)
    aq_a, sa_a, za = ops.quantize_int8(a, False, False)
    wq_t, sw_t, _ = ops.quantize_int8(w, False, True)
    wq_c, sw_c, _ = ops.quantize_int8(w, True, True)
    colsum = wq_c.to(torch.int32).sum(1, dtype=torch.int32)
    want64 = ref.linear_ref(a.cuda(), w.cuda())
    rows = [
        ("int8 one scale", aq_s, sa_s, None, wq_t, sw_t, None, False),
        ("int8 per-channel", aq_s, sa_s, None, wq_c, sw_c, None, True),
        ("int8 per-chan + zp", aq_a, sa_a, za, wq_c, sw_c, colsum, True),
    ]
    lines = [f"{'kernel':<20} {'path':<5} {'max err':>11} {'rms err':>11} {'gate frac':>10} {'sqrtK frac':>10}"]
    fracs = {}
    # the seed's per-column gate: what per-channel scales earn, the same for every row
    bound = ref.quantization_bound(a, w, sa_s, sw_c).cuda()
    stat = ref.statistical_bound(a, w, sa_s, sw_c).cuda()
    for name, aq, sa, z, wq, sw, cs, gated in rows:
        cpu = run_cpu(aq, sa, z, wq, sw, cs, None, torch.float32)
        for kern in KERNELS:
            got = run_cuda(aq, sa, z, wq, sw, cs, None, torch.float32, kern)
            assert_bitexact(got, cpu, f"seed {name} {kern}")
            gc = got.cuda()
            err = (gc.double() - want64).abs()
            frac = ref.worst_fraction(gc, want64, bound)
            fracs[(name, kern)] = frac
            lines.append(f"{name:<20} {kern:<5} {float(err.max()):11.3e} {float(err.pow(2).mean().sqrt()):11.3e} "
                         f"{frac:10.3f} {ref.worst_fraction(gc, want64, stat):10.3f}")
            if gated:
                assert frac <= 1.0, (name, kern, frac)
    print("\n" + "\n".join(lines))
    # the seed's claim: per-channel scales beat one scale on the per-element gate
    assert fracs[("int8 per-channel", "auto")] < fracs[("int8 one scale", "auto")]


# ------------------------------------------------------------- errors ----
@needs_sm80
def test_kernel_names_and_bad_input():
    g = _gen(3)
    a_q, w_q = _i8((4, 32), g).cuda(), _i8((8, 32), g).cuda()
    sa, sw = torch.ones(4, device="cuda"), torch.ones(8, device="cuda")
    for bad in ("cpu", "fma", "MMA", ""):
        with pytest.raises(RuntimeError, match="not a CUDA path"):
            ops.int8_matmul(a_q, sa, None, w_q, sw, None, None, None, bad)
    with pytest.raises(RuntimeError, match="exceeds 65536"):
        z = torch.zeros(2, 65537, dtype=torch.int8, device="cuda")
        ops.int8_matmul(z, torch.ones(2, device="cuda"), None, z, torch.ones(2, device="cuda"), None, None, None, "mma")
    with pytest.raises(RuntimeError, match="is on"):
        ops.int8_matmul(a_q, sa.cpu(), None, w_q, sw, None, None, None, "auto")


@pytest.mark.skipif(not HAS_CUDA or _sm80(), reason="only below sm_80")
def test_pre_sm80_raises():
    a_q = torch.zeros(2, 32, dtype=torch.int8, device="cuda")
    with pytest.raises(RuntimeError, match="compute capability 8.0"):
        ops.int8_matmul(a_q, torch.ones(1, device="cuda"), None, a_q, torch.ones(1, device="cuda"), None, None, None, "auto")


# ------------------------------------------------------- graph capture ----
@needs_sm80
def test_cuda_graph_capture():
    """No host sync anywhere: quantize + matmul (incl. split-K and computed colsum) capture and replay."""
    g = _gen(5)
    x = torch.randn(3, 4096, generator=g).cuda()
    w_q = _i8((37, 4096), g).cuda()
    sw = _scale(37, g).cuda()
    bias = torch.randn(37, generator=g).cuda()
    x2 = torch.randn(70, 1040, generator=g).cuda()
    w2 = _i8((129, 1040), g).cuda()
    sw2 = _scale(129, g).cuda()

    def step():
        q, s, z = ops.quantize_int8(x, True, False)
        y = ops.int8_matmul(q, s, z, w_q, sw, None, bias, torch.float16, "auto")  # gemv split-K
        q2, s2, z2 = ops.quantize_int8(x2, False, True)
        y2 = ops.int8_matmul(q2, s2, None, w2, sw2, None, None, None, "auto")  # mma S split-K
        return y, y2

    eager = step()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        step()  # warm-up outside capture (allocator, lazy module loading)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step()
    graph.replay()
    torch.cuda.synchronize()
    for a, b in zip(out, eager):
        assert torch.equal(a, b)


# ------------------------------------------------------------ quantize ----
def _quant_inputs(R, C, dtype, seed):
    g = _gen(seed)
    x = torch.randn(R, C, generator=g) * torch.logspace(-3, 2, C)[torch.randperm(C, generator=g)]
    if R >= 4:
        x[1] = 0.0  # amax == 0 -> scale 1
        x[2] = -x[2].abs()  # one-sided negative
        x[3] = x[3].abs() + 0.5  # one-sided positive, min > 0
    return x.to(dtype)


@needs_sm80
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (5, 16), (17, 1000), (33, 4096 + 8), (64, 4096), (1000, 3000)])
def test_quantize_matches_cpu(dtype, shape):
    _quantize_matches_cpu(_quant_inputs(*shape, dtype, seed=shape[0] * 31 + shape[1]))


def _quantize_matches_cpu(x, modes=((True, True), (True, False), (False, True), (False, False))):
    """quantize_int8 on CUDA (output poisoned first) bit-equal to the CPU op, per (per_row,
    symmetric) mode; returns the CPU results."""
    out = []
    for per_row, sym in modes:
        want = ops.quantize_int8(x, per_row, sym)
        _poison()
        got = ops.quantize_int8(x.cuda(), per_row, sym)
        for name, gt, wt in zip(("q", "scale", "zero"), got, want):
            gt = gt.cpu()
            assert gt.shape == wt.shape and gt.dtype == wt.dtype, (name, gt.shape, wt.shape)
            assert torch.equal(gt, wt), (name, tuple(x.shape), x.dtype, per_row, sym)
        out.append(want)
    return out


@needs_sm80
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_quantize_unaligned_rows(dtype):
    """A storage offset and a row length that is not a multiple of 16 bytes: scalar loads."""
    R, C = 9, 133
    base = _quant_inputs(R * C + 3, 1, dtype, seed=9).reshape(-1)
    x = base[3:].view(R, C)
    xc = base.cuda()[3:].view(R, C)  # the offset must live on the device
    assert xc.data_ptr() % 16 != 0
    for per_row in (True, False):
        for sym in (True, False):
            want = ops.quantize_int8(x.contiguous(), per_row, sym)
            _poison()
            got = ops.quantize_int8(xc, per_row, sym)
            for gt, wt in zip(got, want):
                assert torch.equal(gt.cpu(), wt)


@needs_sm80
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_quantize_extremes_match_cpu(dtype):
    """Rows at fp32's edges: hi - lo overflowing (the scale is then hi / 255 - lo / 255), one end
    at the max, subnormal-only rows (the scale underflows and becomes 1): bit-exact with the
    CPU op, per row and per tensor."""
    big = 3.0e38
    x = torch.zeros(7, 70)
    x[0, :4] = torch.tensor([big, -big, 1.0, -2.5e37])
    x[1, :3] = torch.tensor([big, 1.0, 2.0e38])
    x[2, :3] = torch.tensor([-big, 1.0e38, 5.0])
    x[3, :2] = torch.tensor([1.0e-44, -3.0e-45])
    x[4, 9] = 1.4e-45
    x[5] = torch.linspace(-1.7e38, 1.7e38, 70)
    x[6] = torch.randn(70)
    if dtype == torch.bfloat16:
        x = x[[0, 1, 2, 5, 6]]  # bf16 holds 3e38 but not 1e-44
    x = x.to(dtype)
    for _, s, _ in _quantize_matches_cpu(x):
        assert bool(torch.isfinite(s).all()) and bool((s > 0).all())
    # subnormal rows alone, per tensor: the whole tensor's scale underflows
    if dtype == torch.float32:
        t = torch.zeros(3, 33)
        t[1, 5], t[2, 7] = 1.0e-44, -2.8e-45
        for _, s, _ in _quantize_matches_cpu(t, ((False, True), (False, False))):
            assert float(s) == 1.0


@needs_sm80
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_quantize_nonfinite_gives_nan_scale(bad):
    """No host sync on CUDA: a non-finite row gets scale NaN, zero 0, codes 0
    (the CPU op raises instead); the other rows are untouched."""
    x = _quant_inputs(6, 300, torch.float32, seed=2)
    x[4, 17] = bad
    for sym in (True, False):
        q, s, z = (t.cpu() for t in ops.quantize_int8(x.cuda(), True, sym))
        assert math.isnan(float(s[4])) and int(z[4]) == 0 and bool((q[4] == 0).all())
        good = [0, 1, 2, 3, 5]
        wq, ws, wz = ops.quantize_int8(x[good], True, sym)
        assert torch.equal(q[good], wq) and torch.equal(s[good], ws) and torch.equal(z[good], wz)
        q, s, z = (t.cpu() for t in ops.quantize_int8(x.cuda(), False, sym))
        assert math.isnan(float(s)) and int(z) == 0 and bool((q == 0).all())
        # and NaN propagates through the matmul to that row only
        w_q = _i8((11, 300), _gen(1))
        q, s, z = ops.quantize_int8(x.cuda(), True, sym)
        y = ops.int8_matmul(q, s, None if sym else z, w_q.cuda(), torch.ones(11, device="cuda"), None, None, None, "auto").cpu()
        assert bool(torch.isnan(y[4]).all()) and bool(torch.isfinite(y[good]).all())


@needs_sm80
def test_dynamic_w8a8_matches_cpu():
    """quantize_int8 + int8_matmul (the two-launch dynamic W8A8 path) on CUDA equals the CPU pipeline."""
    g = _gen(8)
    x = torch.randn(16, 1024 + 16, generator=g).to(torch.bfloat16)
    w = torch.randn(300, 1024 + 16, generator=g)
    w_q, w_s, _ = ops.quantize_int8(w, True, True)
    bias = torch.randn(300, generator=g).to(torch.bfloat16)
    for sym in (True, False):
        q, s, z = ops.quantize_int8(x, True, sym)
        want = ops.int8_matmul(q, s, None if sym else z, w_q, w_s, None, bias, torch.bfloat16, "auto")
        qc, sc, zc = ops.quantize_int8(x.cuda(), True, sym)
        for kern in KERNELS:
            _poison()
            got = ops.int8_matmul(qc, sc, None if sym else zc, w_q.cuda(), w_s.cuda(), None, bias.cuda(), torch.bfloat16, kern)
            assert_bitexact(got.cpu(), want, f"w8a8 sym={sym} {kern}")
