"""The Hopper sparse-wgmma 2:4 GEMMs (torch.ops.torchquant._sparse24_int8_gemm_sm90a and
_sparse24_gemm_sm90a, reached by path="wgmma" of sparse24_int8_matmul / sparse24_gemv).

int8: bit-identical to the CPU sparse24_int8_matmul (exact int32 core, the same rounded
epilogue) over odd shapes, every epilogue variant and every tile configuration forced through
TORCHQUANT_SP24_WGMMA_TILE. fp16 / bf16: within the derived fp32-accumulation bound of a
float64 reference over the dense pruned weight. Both: an identity activation reads the weight
back exactly (pins the fragment and metadata layouts, and names the first misread group),
CUDA-graph capture, bad inputs. Outputs are poisoned (NaN) before every launch.

Skipped unless the GPU is compute capability 9.0 and torchquant._C_sm90a is loaded.
"""

import pytest
import torch

import torchquant  # noqa: F401  (loads torchquant._C and torchquant._C_sm90a)
from conftest import graph_replay_matches_eager, kernels_launched, narrow_dram, poison_cuda, requires_sm90a, sm_count
from test_sparse24 import _check_gemv, _shifted_cuda, _sparse_weight

ops = torch.ops.torchquant
ENV = "TORCHQUANT_SP24_WGMMA_TILE"
CONFIGS = ["256c2", "256c1", "128c1", "64c1", "64c1n", "32c1", "16c1", "16c1x2", "16c1k"]
# decode tiles: tokens per tile
NARROW = {"64c1": 64, "64c1n": 64, "32c1": 32, "16c1": 16, "16c1x2": 16, "16c1k": 16}
HALF = [torch.float16, torch.bfloat16]


pytestmark = requires_sm90a("_sparse24_int8_gemm_sm90a", "_sparse24_gemm_sm90a")


@pytest.fixture(autouse=True)
def _default_config(monkeypatch):
    """Each test starts from the automatic tile choice unless it forces one."""
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.delenv("TORCHQUANT_WGMMA_VEC", raising=False)
    monkeypatch.delenv("TORCHQUANT_SP24_WGMMA_BOX", raising=False)
    monkeypatch.delenv("TORCHQUANT_SP24_KSPLIT", raising=False)


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _bits(t):
    as_int = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16}
    return t.view(as_int[t.dtype]) if t.dtype in as_int else t


def _assert_bit_equal(got, want, what=""):
    assert got.dtype == want.dtype and got.shape == want.shape, what
    g, w = _bits(got.cpu()), _bits(want.cpu())
    if not torch.equal(g, w):
        bad = (g != w).nonzero()
        m, n = (int(v) for v in bad[0])
        raise AssertionError(f"{what}: {len(bad)} of {g.numel()} outputs differ; first at token {m}, "
                             f"feature {n}: got {got.cpu()[m, n].item()}, want {want.cpu()[m, n].item()}")


def _d(t):
    return None if t is None else t.cuda()


def _int8_case(M, N, K, seed, zero=False, per_row=True):
    """CPU (a_q, a_scale, a_zero, dense pruned int8 weight, w_scale, values, meta)."""
    g = _gen(seed)
    a_q = torch.randint(-128, 128, (M, K), generator=g, dtype=torch.int8)
    w = torch.randint(-127, 128, (N, K), generator=g, dtype=torch.int8)
    wp, _ = ops.prune24(w)
    values, meta = ops.compress24(wp)
    a_scale = torch.rand(M if per_row else (), generator=g) * 0.05 + 1e-3
    w_scale = torch.rand(N if per_row else (), generator=g) * 0.01 + 1e-4
    a_zero = torch.randint(-128, 128, (M,) if per_row else (), generator=g, dtype=torch.int32) if zero else None
    return a_q, a_scale, a_zero, wp, w_scale, values, meta


def _variants(N):
    b = torch.randn(N, generator=_gen(N)) * 2.0
    return [
        dict(bias=None, out_dtype=None),
        dict(bias=b, out_dtype=torch.float16),
        dict(bias=b.to(torch.bfloat16), out_dtype=torch.bfloat16),
        dict(bias=b.to(torch.float16), out_dtype=torch.float32),
    ]


def _half_case(N, K, dtype, seed):
    """(values, meta, dense pruned weight) of a random weight: test_sparse24's _sparse_weight."""
    return _sparse_weight(N, K, dtype, seed)


# |y - float64 reference| within the fp32-accumulation bound (test_sparse24.py's check).
_check_bound = _check_gemv


def _first_misread(seen, want, label):
    bad = (seen != want).nonzero()
    if not len(bad):
        return
    n, k = (int(v) for v in bad[0])
    g = k // 4
    raise AssertionError(
        f"{label}: {len(bad)} of {want.numel()} weight elements read wrong; first at feature {n} "
        f"(row {n % 64} of its 64-row warpgroup slice, {'+8' if n % 16 >= 8 else '+0'} half), "
        f"group {g} (K {4 * g}..{4 * g + 3}): want {want[n, 4 * g:4 * g + 4].tolist()}, "
        f"kernel used {seen[n, 4 * g:4 * g + 4].tolist()}")


# ------------------------------------------------------------------------ int8 --
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("K", [128, 256, 640])
def test_int8_identity_reads_the_weight(monkeypatch, config, K):
    """a_q = identity (K tokens), unit scales, fp32 out: y[m, n] = W[n, m] exactly."""
    monkeypatch.setenv(ENV, config)
    N = 200  # two feature tiles, the second partial
    w = torch.randint(-127, 128, (N, K), generator=_gen(K)).to(torch.int8)
    w[w == 0] = 1  # every kept value nonzero, so a misplaced one is visible
    wp, _ = ops.prune24(w)
    values, meta = ops.compress24(wp)
    aq = torch.eye(K, dtype=torch.int8)
    poison_cuda()
    y = ops._sparse24_int8_gemm_sm90a(_d(aq), _d(torch.ones(K)), None, _d(values), _d(meta),
                                      _d(torch.ones(N)), None, None, torch.float32).cpu()
    _first_misread(y.T.contiguous(), wp.float(), f"int8 {config} K={K}")


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("M", [1, 5, 16, 129, 300])
@pytest.mark.parametrize("N,K", [(197, 1024), (256, 256), (1000, 128)])
@pytest.mark.parametrize("zero", [False, True])
def test_int8_bit_exact_vs_cpu(monkeypatch, config, M, N, K, zero):
    monkeypatch.setenv(ENV, config)
    aq, sa, za, wp, sw, values, meta = _int8_case(M, N, K, seed=M * 31 + N + K + int(zero), zero=zero)
    for v in _variants(N):
        want = ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw, None, v["bias"], v["out_dtype"], "cpu")
        poison_cuda()
        got = ops._sparse24_int8_gemm_sm90a(_d(aq), _d(sa), _d(za), _d(values), _d(meta), _d(sw), None,
                                            _d(v["bias"]), v["out_dtype"])
        _assert_bit_equal(got, want, f"{config} M={M} N={N} K={K} zero={zero} {v['out_dtype']}")


@pytest.mark.parametrize("vec", ["0", "1"])
@pytest.mark.parametrize("config", CONFIGS)
def test_vec_store_knob(monkeypatch, config, vec):
    # N % 8 == 0, 16-bit out: TORCHQUANT_WGMMA_VEC=1 the regrouped 16-byte stores (the int8
    # kernel's default), 0 the 4-byte pair stores (the 16-bit kernel's default); both must give
    # the CPU op's bits (int8) / stay in bound (bf16).
    monkeypatch.setenv(ENV, config)
    monkeypatch.setenv("TORCHQUANT_WGMMA_VEC", vec)
    M, N, K = 300, 1000, 256
    aq, sa, za, wp, sw, values, meta = _int8_case(M, N, K, seed=41, zero=True)
    want = ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw, None, None, torch.bfloat16, "cpu")
    poison_cuda()
    got = ops._sparse24_int8_gemm_sm90a(_d(aq), _d(sa), _d(za), _d(values), _d(meta), _d(sw), None,
                                        None, torch.bfloat16)
    _assert_bit_equal(got, want, f"vec={vec} {config}")
    hv, hm, hw = _half_case(N, K, torch.bfloat16, seed=42)
    x = torch.randn(M, K, generator=_gen(43)).to(torch.bfloat16)
    poison_cuda()
    y = ops.sparse24_gemv(_d(x), _d(hv), _d(hm), None, "wgmma")
    _check_bound(y.cpu(), x, hw, None)


@pytest.mark.parametrize("box", [None, "0"])
@pytest.mark.parametrize("config", list(NARROW))
def test_narrow_tiles_activation_box(monkeypatch, config, box):
    """The decode tiles load round_up(M, 8) activation rows per stage when M fits one token
    tile (box=None, the default) or the tile's whole box (TORCHQUANT_SP24_WGMMA_BOX=0): every M
    from 1 to the tile width and one past it, int8 bit-exact against the CPU op and fp16 / bf16
    in bound, and the two box settings give the same bits (the rows past M only reach D
    columns that are never stored)."""
    monkeypatch.setenv(ENV, config)

    def set_box(value):  # None: the default (the box cut to M)
        if value is None:
            monkeypatch.delenv("TORCHQUANT_SP24_WGMMA_BOX", raising=False)
        else:
            monkeypatch.setenv("TORCHQUANT_SP24_WGMMA_BOX", value)

    width = NARROW[config]
    N, K = 200, 384
    ms = sorted(set(range(1, 17)) | {width - 1, width, width + 1})
    for M in ms:
        set_box(box)
        aq, sa, za, wp, sw, values, meta = _int8_case(M, N, K, seed=M + 500, zero=True)
        want = ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw, None, None, torch.bfloat16, "cpu")
        poison_cuda()
        got = ops.sparse24_int8_matmul(_d(aq), _d(sa), _d(za), _d(values), _d(meta), _d(sw), None, None,
                                       torch.bfloat16, "wgmma")
        _assert_bit_equal(got, want, f"{config} box={box} M={M}")
        for dtype in HALF:
            hv, hm, hw = _half_case(N, K, dtype, seed=M + 600)
            x = torch.randn(M, K, generator=_gen(M + 700)).to(dtype)
            set_box(box)
            poison_cuda()
            y = ops.sparse24_gemv(_d(x), _d(hv), _d(hm), None, "wgmma")
            _check_bound(y.cpu(), x, hw, None)
            set_box("0")
            poison_cuda()
            y_full = ops.sparse24_gemv(_d(x), _d(hv), _d(hm), None, "wgmma")
            _assert_bit_equal(y, y_full, f"{config} {dtype} M={M}: cut box vs whole box")


def test_int8_one_element_scales_and_explicit_colsum():
    aq, sa, za, wp, sw, values, meta = _int8_case(37, 130, 384, seed=7, zero=True, per_row=False)
    cs = wp.to(torch.int32).sum(1).to(torch.int32)
    want = ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw, cs, None, torch.bfloat16, "cpu")
    poison_cuda()
    got = ops.sparse24_int8_matmul(_d(aq), _d(sa), _d(za), _d(values), _d(meta), _d(sw), _d(cs), None,
                                   torch.bfloat16, "wgmma")
    _assert_bit_equal(got, want, "one-element scales")


def test_int8_model_shape_matches_dense_int8_matmul():
    """A Llama-shaped GEMM: the 2:4 result equals int8_matmul over the dense pruned weight."""
    M, N, K = 512, 4096, 4096
    aq, sa, za, wp, sw, values, meta = _int8_case(M, N, K, seed=11, zero=True)
    want = ops.int8_matmul(_d(aq), _d(sa), _d(za), _d(wp), _d(sw), None, None, torch.bfloat16, "auto")
    poison_cuda()
    got = ops.sparse24_int8_matmul(_d(aq), _d(sa), _d(za), _d(values), _d(meta), _d(sw), None, None,
                                   torch.bfloat16, "wgmma")
    _assert_bit_equal(got, want, "4096x4096 M=512")


# ----------------------------------------------------------------- fp16 / bf16 --
@pytest.mark.parametrize("vec", [None, "1"])  # "1": 16-byte stores (off by default here)
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("K", [128, 384])
def test_half_identity_reads_the_weight(monkeypatch, dtype, config, K, vec):
    """x = identity: each output is one exact product, so y^T is the weight bit for bit."""
    monkeypatch.setenv(ENV, config)
    if vec:
        monkeypatch.setenv("TORCHQUANT_WGMMA_VEC", vec)
    N = 136
    values, meta, wp = _half_case(N, K, dtype, seed=K + 3)
    x = torch.eye(K, dtype=dtype)
    poison_cuda()
    y = ops._sparse24_gemm_sm90a(_d(x), _d(values), _d(meta), None).cpu()
    # Values, not bits: a dropped (+0) position may come back as -0 (a sum of 0 x negative).
    _first_misread(y.T.contiguous().float(), wp.float(), f"{dtype} {config} K={K}")


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("M", [1, 16, 77, 257])
@pytest.mark.parametrize("N,K", [(197, 512), (256, 128), (64, 1152)])
def test_half_within_bound(monkeypatch, dtype, config, M, N, K):
    monkeypatch.setenv(ENV, config)
    values, meta, wp = _half_case(N, K, dtype, seed=M + N + K)
    x = torch.randn(M, K, generator=_gen(M * K)).to(dtype)
    bias = torch.randn(N, generator=_gen(N)).to(dtype)
    for b in (None, bias):
        poison_cuda()
        y = ops.sparse24_gemv(_d(x), _d(values), _d(meta), _d(b), "wgmma")
        _check_bound(y.cpu(), x, wp, b)


@pytest.mark.parametrize("dtype", HALF)
def test_half_model_shape_within_bound(dtype):
    M, N, K = 256, 4096, 4096
    values, meta, wp = _half_case(N, K, dtype, seed=13)
    x = torch.randn(M, K, generator=_gen(14)).to(dtype)
    poison_cuda()
    y = ops.sparse24_gemv(_d(x), _d(values), _d(meta), None, "wgmma")
    _check_bound(y.cpu(), x, wp, None)


# ------------------------------------------------------------- both / plumbing --
def test_graph_capture_and_determinism():
    aq, sa, za, wp, sw, values, meta = _int8_case(300, 520, 512, seed=21, zero=True)
    vh, mh, _ = _half_case(520, 512, torch.bfloat16, seed=22)
    xh = torch.randn(300, 512, generator=_gen(23)).to(torch.bfloat16).cuda()
    i8 = [_d(t) for t in (aq, sa, za, values, meta, sw)]
    vh, mh = vh.cuda(), mh.cuda()

    graph_replay_matches_eager(lambda: (ops.sparse24_int8_matmul(*i8, None, None, torch.float16, "wgmma"),
                                        ops.sparse24_gemv(xh, vh, mh, None, "wgmma")))


def test_misaligned_views_are_copied():
    aq, sa, za, wp, sw, values, meta = _int8_case(40, 64, 256, seed=31)
    want = ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw, None, None, None, "cpu")
    poison_cuda()
    got = ops.sparse24_int8_matmul(_shifted_cuda(aq), _d(sa), None, _shifted_cuda(values),
                                   _shifted_cuda(meta), _d(sw), None, None, None, "wgmma")
    _assert_bit_equal(got, want, "misaligned views")


def test_bad_inputs(monkeypatch):
    aq, sa, za, wp, sw, values, meta = _int8_case(4, 32, 96, seed=41)  # K % 128 != 0
    with pytest.raises(RuntimeError, match="path 'wgmma' needs K % 128 == 0"):
        ops.sparse24_int8_matmul(_d(aq), _d(sa), None, _d(values), _d(meta), _d(sw), None, None, None, "wgmma")
    vh, mh, _ = _half_case(32, 96, torch.float16, seed=42)
    xh = torch.randn(4, 96).to(torch.float16)
    with pytest.raises(RuntimeError, match="path 'wgmma' needs K % 128 == 0"):
        ops.sparse24_gemv(_d(xh), _d(vh), _d(mh), None, "wgmma")
    # The op's own validation runs first, with the op's words.
    with pytest.raises(RuntimeError, match="x must be float16 or bfloat16"):
        ops.sparse24_gemv(_d(xh).float(), _d(vh), _d(mh), None, "wgmma")
    with pytest.raises(RuntimeError, match="not a CPU path"):
        ops.sparse24_gemv(xh, vh, mh, None, "wgmma")
    aq, sa, za, wp, sw, values, meta = _int8_case(4, 32, 128, seed=43)
    monkeypatch.setenv(ENV, "64c9")
    with pytest.raises(RuntimeError, match="TORCHQUANT_SP24_WGMMA_TILE='64c9'"):
        ops.sparse24_int8_matmul(_d(aq), _d(sa), None, _d(values), _d(meta), _d(sw), None, None, None, "wgmma")


def test_opcheck_internal_ops():
    aq, sa, za, wp, sw, values, meta = _int8_case(9, 40, 256, seed=51, zero=True)
    torch.library.opcheck(ops._sparse24_int8_gemm_sm90a,
                          tuple(_d(t) for t in (aq, sa, za, values, meta, sw)) + (None, None, torch.bfloat16))
    vh, mh, _ = _half_case(40, 256, torch.bfloat16, seed=52)
    xh = torch.randn(9, 256).to(torch.bfloat16)
    torch.library.opcheck(ops._sparse24_gemm_sm90a, (_d(xh), _d(vh), _d(mh), None))


# auto_takes_sparse_wgmma (csrc/sparse/sparse24.cu): (M, N, the path "auto" must take) for the
# int8 and the 16-bit op. K = 256 throughout (a multiple of 128).
_AUTO_INT8 = [(1, 6144, "gemv"), (2, 8192, "gemv"), (3, 6144, "wgmma"), (3, 6016, "gemv"),
              (8, 6144, "wgmma"), (7, 4096, "mma"), (8, 4096, "wgmma"), (16, 200, "wgmma"), (17, 200, "wgmma"),
              (63, 200, "wgmma"), (64, 200, "wgmma")]
_AUTO_HALF = [(1, 8192, "fma"), (2, 8192, "wgmma"), (2, 6144, "fma"), (4, 6144, "wgmma"),
              (4, 4096, "mma"), (16, 4096, "mma"), (16, 8192, "wgmma"), (17, 200, "wgmma"),
              (64, 200, "wgmma")]
# A substring of the name of the kernel each path launches.
_KERNEL = {"wgmma": "sparse24_gemm_sm90a_kernel", "gemv": "sparse24_int8_gemv_kernel",
           "mma": "_mma_kernel", "fma": "sparse24_gemv_fma_kernel"}


def _assert_ran(names, path, what):
    want = _KERNEL[path]
    assert any(want in n for n in names), f"{what}: expected a '{want}' launch, got {names}"
    for other, sub in _KERNEL.items():
        if other != path and sub not in want:
            assert not any(sub in n for n in names), f"{what}: '{sub}' launched, {names}"


@pytest.mark.parametrize("M,N,want_path", _AUTO_INT8)
def test_auto_int8_rule(M, N, want_path):
    """"auto" of sparse24_int8_matmul launches the kernel of the path the rule names, and
    gives that path's bits."""
    K = 256
    aq, sa, za, wp, sw, values, meta = _int8_case(M, N, K, seed=61 + M + N, zero=True)
    args = [_d(t) for t in (aq, sa, za, values, meta, sw)]
    poison_cuda()
    out = {}
    names = kernels_launched(lambda: out.setdefault(
        "auto", ops.sparse24_int8_matmul(*args, None, None, torch.float16, "auto")))
    _assert_ran(names, want_path, f"int8 auto M={M} N={N}")
    poison_cuda()
    want = ops.sparse24_int8_matmul(*args, None, None, torch.float16, want_path)
    _assert_bit_equal(out["auto"], want, f"auto M={M} N={N}")


@pytest.mark.parametrize("M,N,want_path", _AUTO_HALF)
def test_auto_half_rule(M, N, want_path):
    """"auto" of sparse24_gemv launches the kernel of the path the rule names, and gives that
    path's bits."""
    K = 256
    vh, mh, _ = _half_case(N, K, torch.bfloat16, seed=62 + M + N)
    xh = torch.randn(M, K, generator=_gen(M + N)).to(torch.bfloat16).cuda()
    vh, mh = vh.cuda(), mh.cuda()
    poison_cuda()
    out = {}
    names = kernels_launched(lambda: out.setdefault("auto", ops.sparse24_gemv(xh, vh, mh, None, "auto")))
    _assert_ran(names, want_path, f"bf16 auto M={M} N={N}")
    poison_cuda()
    want = ops.sparse24_gemv(xh, vh, mh, None, want_path)
    _assert_bit_equal(out["auto"], want, f"auto M={M} N={N}")


@pytest.mark.parametrize("extra_sms,want_per_sm", [(1, 2), (None, 2), (0, 1), (-8, 1), (8, 1)])
def test_auto_two_ctas_per_sm_rule(monkeypatch, extra_sms, want_per_sm):
    """M <= 16 on the wgmma path: the 16-token tile runs two CTAs per SM (16c1x2) exactly when
    the 128-feature tiles number more than one and at most two per SM (the template's last
    argument in the kernel name); its bits equal the one-per-SM tile's."""
    sms = sm_count()
    # feature tiles: sms + 1, 2 sms, sms, sms - 8, 2 sms + 8
    tiles = {1: sms + 1, None: 2 * sms, 0: sms, -8: sms - 8, 8: 2 * sms + 8}[extra_sms]
    N, K, M = 128 * tiles - 3, 256, 8
    vh, mh, _ = _half_case(N, K, torch.bfloat16, seed=63 + N)
    xh = torch.randn(M, K, generator=_gen(N)).to(torch.bfloat16).cuda()
    vh, mh = vh.cuda(), mh.cuda()
    poison_cuda()
    out = {}
    names = kernels_launched(lambda: out.setdefault("auto", ops.sparse24_gemv(xh, vh, mh, None, "wgmma")))
    flat = [n.replace(" ", "") for n in names if _KERNEL["wgmma"] in n]
    assert len(flat) == 1, names
    assert f"SpConfig<16,{8 if want_per_sm == 1 else 4},1,128,{want_per_sm},false>" in flat[0], flat[0]
    monkeypatch.setenv(ENV, "16c1")
    poison_cuda()
    want = ops.sparse24_gemv(xh, vh, mh, None, "wgmma")
    _assert_bit_equal(out["auto"], want, f"tiles={tiles}")


# ---------------------------------------------------------- cluster K split --
@pytest.mark.parametrize("ks", ["2", "4", "8"])
@pytest.mark.parametrize("M", [1, 7, 16, 33])
def test_ksplit_int8_exact_half_in_bound(monkeypatch, ks, M):
    """16c1k with K split over a cluster of ks CTAs, forced: 13 stages of K, so the ranks get
    unequal shares (one or two at ks = 8); int8 bit-identical to the CPU op (every epilogue
    variant, zero point on), fp16 / bf16 within the derived fp32-accumulation bound; odd N
    (a partial last feature tile), M past one token tile."""
    monkeypatch.setenv(ENV, "16c1k")
    monkeypatch.setenv("TORCHQUANT_SP24_KSPLIT", ks)
    N = 1000
    aq, sa, za, wp, sw, values, meta = _int8_case(M, N, 256 * 13, seed=800 + M, zero=True)
    for v in _variants(N):
        want = ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw, None, v["bias"], v["out_dtype"], "cpu")
        poison_cuda()
        got = ops.sparse24_int8_matmul(_d(aq), _d(sa), _d(za), _d(values), _d(meta), _d(sw), None,
                                       _d(v["bias"]), v["out_dtype"], "wgmma")
        _assert_bit_equal(got, want, f"16c1k ks={ks} M={M} {v['out_dtype']}")
    for dtype in HALF:
        hv, hm, hw = _half_case(N, 128 * 13, dtype, seed=900 + M)
        x = torch.randn(M, 128 * 13, generator=_gen(M + 901)).to(dtype)
        poison_cuda()
        y = ops.sparse24_gemv(_d(x), _d(hv), _d(hm), None, "wgmma")
        _check_bound(y.cpu(), x, hw, None)


def test_ksplit_deterministic_and_graph_safe(monkeypatch):
    """The rank partials are added in rank order: two runs give the same bits, and a CUDA
    graph replay gives the eager bits."""
    monkeypatch.setenv(ENV, "16c1k")
    N, K, M = 520, 128 * 16, 8
    hv, hm, _ = _half_case(N, K, torch.bfloat16, seed=77)
    x = torch.randn(M, K, generator=_gen(78)).to(torch.bfloat16)
    args = (_d(x), _d(hv), _d(hm), None, "wgmma")
    poison_cuda()
    a = ops.sparse24_gemv(*args)
    poison_cuda()
    b = ops.sparse24_gemv(*args)
    _assert_bit_equal(a, b, "16c1k run to run")
    graph_replay_matches_eager(lambda: ops.sparse24_gemv(*args))  # asserts inside


def test_ksplit_knob_errors(monkeypatch):
    monkeypatch.setenv(ENV, "16c1k")
    hv, hm, _ = _half_case(256, 256, torch.bfloat16, seed=5)  # two stages of K
    x = _d(torch.randn(4, 256).to(torch.bfloat16))
    monkeypatch.setenv("TORCHQUANT_SP24_KSPLIT", "4")
    with pytest.raises(RuntimeError, match="TORCHQUANT_SP24_KSPLIT=4 needs at least 4 k-blocks"):
        ops.sparse24_gemv(x, _d(hv), _d(hm), None, "wgmma")
    monkeypatch.setenv("TORCHQUANT_SP24_KSPLIT", "3")
    with pytest.raises(RuntimeError, match="is not one of 2, 4, 8"):
        ops.sparse24_gemv(x, _d(hv), _d(hm), None, "wgmma")


_AUTO_KSPLIT = [(False, 8, 8, "16c1k"), (False, 8, 7, None), (False, 1, 8, None), (False, 2, 8, None),
                (False, 3, 8, "16c1k"), (False, 16, 16, "16c1k"), (False, 1, 64, "16c1k"),
                (False, 2, 64, "16c1k"), (False, 2, 63, None), (False, 2, 32, "wide:16c1k"),
                (False, 2, 31, None), (False, 1, 32, None),
                (True, 8, 8, "16c1k"), (True, 8, 7, "16c1"), (True, 2, 8, None), (True, 3, 8, None),
                (True, 4, 8, "16c1k"), (True, 7, 8, "16c1k"), (True, 4, 7, None), (True, 16, 16, "16c1k")]


@pytest.mark.parametrize("int8,M,stages,want", _AUTO_KSPLIT)
def test_auto_small_grid_rule(int8, M, stages, want):
    """A grid of 8 feature tiles (<= a quarter of the SMs): "auto" takes, 16-bit, from M = 3
    the sparse wgmma GEMM's K-split tile when K gives >= 8 stages (128 logical K each), at
    M = 1..2 only for rows of K >= 8192 and >= 4 N (64 stages here; the fma GEMV below that),
    and at M = 2 from K = 4096 (32 stages) on cards of more than 15.0 DRAM bytes per SM clock
    ("wide:": the H200; common/device.h narrow_dram), and otherwise stays off the wgmma GEMM
    (mma.sp / the fma GEMV); int8 from M = 4 the K-split
    tile when K gives >= 8 stages of 256, else from M = 8 the unsplit 16-token tile, and the
    dp4a GEMV / mma.sp below. The bits equal the forced path's."""
    N = 128 * 8 - 5
    K = stages * (256 if int8 else 128)
    if int8:
        aq, sa, za, wp, sw, values, meta = _int8_case(M, N, K, seed=K + M, zero=True)
        args = [_d(t) for t in (aq, sa, za, values, meta, sw)]
        call = lambda path: ops.sparse24_int8_matmul(*args, None, None, torch.float16, path)  # noqa: E731
    else:
        hv, hm, _ = _half_case(N, K, torch.bfloat16, seed=K + M)
        x = _d(torch.randn(M, K, generator=_gen(K)).to(torch.bfloat16))
        call = lambda path: ops.sparse24_gemv(x, _d(hv), _d(hm), None, path)  # noqa: E731
    poison_cuda()
    out = {}
    names = kernels_launched(lambda: out.setdefault("auto", call("auto")))
    flat = [n.replace(" ", "") for n in names if _KERNEL["wgmma"] in n]
    if want is not None and want.startswith("wide:"):
        want = None if narrow_dram() else want[5:]
    if want is None:
        assert not flat, names
        return
    split = "true" if want == "16c1k" else "false"
    assert len(flat) == 1 and f"SpConfig<16,8,1,128,1,{split}>" in flat[0], names
    poison_cuda()
    _assert_bit_equal(out["auto"], call("wgmma"), f"auto M={M} stages={stages}")
