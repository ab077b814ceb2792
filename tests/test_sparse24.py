"""2:4 sparsity: prune24 / compress24 / decompress24 on CUDA bit-exact against
the CPU ops, their data errors, and sparse24_gemv (CPU and every CUDA path)
against float64 over the dense pruned weight with the derived fp32 bound.

CUDA tests skip cleanly without a GPU; every CUDA launch is preceded by
poison_cuda() so an output element a kernel forgets to write reads NaN.
"""

import pytest
import torch

import torchquant  # noqa: F401
from torchquant.reference import fp32_accum_bound, linear_ref

from conftest import HAS_CUDA, cuda_capability, misaligned, poison_cuda, requires_cuda

ops = torch.ops.torchquant

DTYPES24 = [torch.int8, torch.float16, torch.bfloat16, torch.float32]
HALF = [torch.float16, torch.bfloat16]
ODD_N = [1, 7, 33]
ODD_K = [4, 12, 64, 1028]
HAS_SM80 = HAS_CUDA and cuda_capability() >= (8, 0)


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _weight(N, K, dtype, seed, ties=False):
    """Random weight; with ties=True values come from a tiny set (+-0, +-1,
    +-2) so most groups have equal magnitudes, -0.0 included."""
    g = _gen(seed)
    if ties:
        w = torch.randint(-2, 3, (N, K), generator=g).to(torch.float32)
        neg_zero = (torch.rand(N, K, generator=g) < 0.2) & (w == 0)
        w[neg_zero] = -0.0
    else:
        w = torch.randn(N, K, generator=g) * 30
    if dtype == torch.int8:
        return w.round().clamp(-128, 127).to(torch.int8)
    return w.to(dtype)


def _bits(t):
    """A view whose torch.equal is a bitwise comparison (-0.0 != +0.0)."""
    as_int = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16}
    return t.view(as_int[t.dtype]) if t.dtype in as_int else t


def _assert_bit_equal(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert torch.equal(_bits(a.cpu()), _bits(b.cpu()))


def _sparse_weight(N, K, dtype, seed):
    """(values, meta, dense pruned weight) built with the CPU ops."""
    w = torch.randn(N, K, generator=_gen(seed)).to(dtype)
    pruned, _ = ops.prune24(w)
    values, meta = ops.compress24(pruned)
    return values, meta, pruned


def _shifted_cuda(t):
    """A CUDA copy of t one element past an aligned address: not 16-byte aligned."""
    return misaligned(t.cuda(), t.element_size())


def _check_gemv(y, x, w_dense, bias):
    """|y - float64 reference| within the fp32-accumulation bound, elementwise."""
    assert y.shape == (x.shape[0], w_dense.shape[0]) and y.dtype == x.dtype
    y64 = y.to(torch.float64)
    assert bool(torch.isfinite(y64).all()), "non-finite output (an element left unwritten?)"
    ref = linear_ref(x, w_dense, bias)
    bound = fp32_accum_bound(x, w_dense, bias, x.dtype)
    err = (y64 - ref).abs()
    worst = float((err / bound).max())
    assert bool((err <= bound).all()), f"worst error / bound = {worst:.3g}"


# ============================================================ CPU =========
@pytest.mark.parametrize("dtype", DTYPES24)
def test_cpu_compress_round_trip_with_ties(dtype):
    w = _weight(33, 1028, dtype, seed=1, ties=True)
    pruned, mask = ops.prune24(w)
    assert bool((mask.view(33, -1, 4).sum(-1) == 2).all())
    values, meta = ops.compress24(pruned)
    assert values.shape == (33, 514) and meta.shape == (33, 129)
    # K/4 = 257 groups is odd: the last byte's high nibble is 0.
    assert bool((meta[:, -1] >> 4 == 0).all())
    # Every nibble has pos0 < pos1.
    nib = torch.stack((meta & 0xF, meta >> 4), -1).view(33, -1)[:, :257]
    assert bool(((nib & 3) < (nib >> 2)).all())
    back = ops.decompress24(values, meta)
    assert torch.equal(back, pruned)  # by value (-0.0 at dropped positions reads +0.0)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("M", [1, 2, 3, 5, 8, 16, 17, 33])
@pytest.mark.parametrize("N,K", [(1, 4), (7, 12), (33, 64), (19, 1028)])
def test_cpu_gemv_vs_float64(dtype, M, N, K):
    values, meta, w = _sparse_weight(N, K, dtype, seed=M * 131 + N + K)
    x = torch.randn(M, K, generator=_gen(M + 7 * K)).to(dtype)
    bias = torch.randn(N, generator=_gen(N)).to(dtype)
    _check_gemv(ops.sparse24_gemv(x, values, meta, bias, "auto"), x, w, bias)
    _check_gemv(ops.sparse24_gemv(x, values, meta, None, "cpu"), x, w, None)


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_cpu_gemv_nonfinite_x_at_pruned_positions_is_never_read(bad):
    """The CPU kernel expands the weight to dense with zeros where pruned, and
    0 * Inf is NaN; an x holding Inf or NaN therefore takes the gather kernel,
    in which (as in the CUDA kernels) a pruned position never meets x."""
    N, K = 1, 1028
    values, meta, w = _sparse_weight(N, K, torch.bfloat16, seed=5)
    x = torch.randn(2, K, generator=_gen(3)).to(torch.bfloat16)
    pruned = (w[0] == 0).nonzero().flatten()
    x_bad = x.clone()
    x_bad[:, pruned] = bad
    x_zero = x.clone()
    x_zero[:, pruned] = 0
    _check_gemv(ops.sparse24_gemv(x_bad, values, meta, None, "cpu"), x_zero, w, None)
    # a nonfinite x at a kept position does reach the output
    kept = int((w[0] != 0).nonzero()[0])
    x_bad[1, kept] = bad
    y = ops.sparse24_gemv(x_bad, values, meta, None, "cpu")
    assert bool(torch.isfinite(y[0]).all()) and not bool(torch.isfinite(y[1]).all())


def test_cpu_gemv_reads_the_positions():
    # One group, kept positions (1, 3): y = v0 * x[1] + v1 * x[3] exactly.
    values = torch.tensor([[2.0, -3.0]], dtype=torch.float16)
    meta = torch.tensor([[1 | (3 << 2)]], dtype=torch.uint8)
    x = torch.tensor([[100.0, 5.0, 1000.0, 7.0]], dtype=torch.float16)
    y = ops.sparse24_gemv(x, values, meta)
    assert float(y) == 2.0 * 5.0 - 3.0 * 7.0


def test_gemv_bad_inputs_cpu():
    values, meta, _ = _sparse_weight(8, 64, torch.float16, seed=3)
    x = torch.randn(2, 64).to(torch.float16)
    cases = [
        (lambda: ops.sparse24_gemv(x.float(), values, meta), "x must be float16 or bfloat16"),
        (lambda: ops.sparse24_gemv(x.bfloat16(), values, meta), "values dtype"),
        (lambda: ops.sparse24_gemv(x[:, :60].contiguous(), values, meta), "values must be"),
        (lambda: ops.sparse24_gemv(x[:, :62].contiguous(), values, meta), "multiple of 4"),
        (lambda: ops.sparse24_gemv(x, values, meta[:, :4].contiguous()), "meta must be"),
        (lambda: ops.sparse24_gemv(x, values, meta.to(torch.int8)), "meta must be"),
        (lambda: ops.sparse24_gemv(x, values, meta, torch.ones(8)), "bias dtype"),
        (lambda: ops.sparse24_gemv(x, values, meta, torch.ones(7, dtype=torch.float16)), "bias must be"),
        (lambda: ops.sparse24_gemv(x[:, ::2], values, meta), "contiguous"),
        (lambda: ops.sparse24_gemv(x[:0], values, meta), "empty"),
        (lambda: ops.sparse24_gemv(x, values, meta, None, "mma"), "not a CPU path"),
        (lambda: ops.sparse24_gemv(x, values, meta, None, "fast"), "not a CPU path"),
    ]
    for fn, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            fn()


def test_gemv_opcheck_cpu():
    values, meta, _ = _sparse_weight(24, 64, torch.float16, seed=5)
    x = torch.randn(3, 64).to(torch.float16)
    torch.library.opcheck(ops.sparse24_gemv, (x, values, meta, torch.randn(24).to(torch.float16), "auto"))
    torch.library.opcheck(ops.sparse24_gemv, (x, values, meta, None, "auto"))


# =========================================================== CUDA =========
@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES24)
@pytest.mark.parametrize("N", ODD_N)
@pytest.mark.parametrize("K", ODD_K)
@pytest.mark.parametrize("ties", [False, True])
def test_cuda_prune_compress_decompress_bit_exact(dtype, N, K, ties):
    w = _weight(N, K, dtype, seed=N * 1000 + K + int(ties), ties=ties)
    p_cpu, m_cpu = ops.prune24(w)
    v_cpu, meta_cpu = ops.compress24(p_cpu)
    poison_cuda()
    p_gpu, m_gpu = ops.prune24(w.cuda())
    _assert_bit_equal(p_gpu, p_cpu)
    assert torch.equal(m_gpu.cpu(), m_cpu)
    poison_cuda()
    v_gpu, meta_gpu = ops.compress24(p_gpu)
    _assert_bit_equal(v_gpu, v_cpu)
    assert torch.equal(meta_gpu.cpu(), meta_cpu)
    # compress24 of a tensor that is not the output of prune24 (fewer than two
    # nonzeros in many groups, -0.0 included) must pick the same positions.
    sparse = w.clone()
    sparse.view(N, -1, 4)[..., 1:] = 0
    v2_cpu, meta2_cpu = ops.compress24(sparse)
    poison_cuda()
    v2_gpu, meta2_gpu = ops.compress24(sparse.cuda())
    _assert_bit_equal(v2_gpu, v2_cpu)
    assert torch.equal(meta2_gpu.cpu(), meta2_cpu)
    poison_cuda()
    d_gpu = ops.decompress24(v_gpu, meta_gpu)
    _assert_bit_equal(d_gpu, ops.decompress24(v_cpu, meta_cpu))


@requires_cuda
@pytest.mark.parametrize("dtype", DTYPES24)
def test_cuda_compress_rejects_three_or_four_nonzeros_like_cpu(dtype):
    w = torch.zeros(9, 40).to(dtype)
    w[5, 8:11] = 1  # row 5, group 2: three nonzeros (the first bad group)
    w[7, 0:4] = 1  # row 7, group 0: four
    w[5, 36:40] = 1  # row 5, group 9: four, later in row-major order
    with pytest.raises(RuntimeError) as cpu_err:
        ops.compress24(w)
    with pytest.raises(RuntimeError) as gpu_err:
        ops.compress24(w.cuda())
    assert "row 5, group 2 (columns 8..11) has 3 nonzeros" in str(gpu_err.value)
    assert str(gpu_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]
    w[5, 8:11] = 0
    with pytest.raises(RuntimeError, match=r"row 5, group 9 \(columns 36..39\) has 4 nonzeros"):
        ops.compress24(w.cuda())


@requires_cuda
def test_cuda_decompress_rejects_bad_nibble_like_cpu():
    values = torch.randn(3, 8).to(torch.float16)  # K = 16: 4 groups, 2 bytes per row
    meta = torch.full((3, 2), 0x44, dtype=torch.uint8)  # (0, 1) everywhere
    meta[2, 1] = 0x4 | (0x9 << 4)  # row 2, group 3: nibble 9 = positions (1, 2): valid
    meta[1, 1] = 0x6 | (0x4 << 4)  # row 1, group 2: nibble 6 = positions (2, 1): bad
    meta[2, 0] = 0x5  # row 2, group 0: positions (1, 1): bad, but later
    with pytest.raises(RuntimeError) as cpu_err:
        ops.decompress24(values, meta)
    with pytest.raises(RuntimeError) as gpu_err:
        ops.decompress24(values.cuda(), meta.cuda())
    assert "meta of row 1, group 2 is nibble 6" in str(gpu_err.value)
    assert str(gpu_err.value).splitlines()[0] == str(cpu_err.value).splitlines()[0]


@requires_cuda
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_cuda_prune_rejects_nonfinite(bad):
    w = torch.randn(4, 32, device="cuda")
    w[3, 17] = bad
    with pytest.raises(RuntimeError, match="NaN or Inf"):
        ops.prune24(w)


def _cuda_paths():
    return ["auto", "fma"] + (["mma"] if HAS_SM80 else [])


@requires_cuda
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("kernel", ["auto", "fma", "mma"])
@pytest.mark.parametrize("M", list(range(1, 17)))
def test_cuda_gemv_every_path_every_small_m(dtype, kernel, M):
    if kernel == "mma" and not HAS_SM80:
        pytest.skip("the mma path needs sm_80")
    # N = 197: not a multiple of 8 * RW (fma) nor of 64 (mma); K = 1056 =
    # 8 x 128 + 32: a tail chunk of one 32-K step on the mma path.
    N, K = 197, 1056
    values, meta, w = _sparse_weight(N, K, dtype, seed=11 + M)
    values, meta, w = values.cuda(), meta.cuda(), w.cuda()
    x = torch.randn(M, K, generator=_gen(M)).to(dtype).cuda()
    bias = torch.randn(N, generator=_gen(N + M)).to(dtype).cuda()
    for b in (bias, None):
        poison_cuda()
        y = ops.sparse24_gemv(x, values, meta, b, kernel)
        _check_gemv(y, x, w, b)


@requires_cuda
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("kernel", ["auto", "fma", "mma"])
@pytest.mark.parametrize("N,K", [(1, 32), (7, 64), (33, 96), (64, 128), (65, 4096), (130, 224)])
@pytest.mark.parametrize("M", [1, 4, 8, 9, 16, 40])
def test_cuda_gemv_shapes(dtype, kernel, N, K, M):
    if kernel == "mma" and not HAS_SM80:
        pytest.skip("the mma path needs sm_80")
    values, meta, w = _sparse_weight(N, K, dtype, seed=N * 7 + K + M)
    values, meta, w = values.cuda(), meta.cuda(), w.cuda()
    x = torch.randn(M, K, generator=_gen(K + M)).to(dtype).cuda()
    bias = torch.randn(N, generator=_gen(N)).to(dtype).cuda()
    poison_cuda()
    _check_gemv(ops.sparse24_gemv(x, values, meta, bias, kernel), x, w, bias)


@requires_cuda
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("variant", ["rw4", "rw2", "rw1"])
@pytest.mark.parametrize("M", [1, 2])
def test_cuda_gemv_rows_per_warp_variants(monkeypatch, dtype, variant, M):
    """The decode fma kernel with every rows-per-warp choice (TORCHQUANT_SP24_FMA, at M = 1
    and 2) adds the same products in the same order as the default launch: within the
    bound and bit for bit the default's output. N = 197 (not a multiple of 8 * RW), K = 1056
    (33 lane steps of 32: a partial last round)."""
    N, K = 197, 1056
    values, meta, w = _sparse_weight(N, K, dtype, seed=5)
    values, meta, w = values.cuda(), meta.cuda(), w.cuda()
    x = torch.randn(M, K, generator=_gen(6)).to(dtype).cuda()
    bias = torch.randn(N, generator=_gen(7)).to(dtype).cuda()
    monkeypatch.delenv("TORCHQUANT_SP24_FMA", raising=False)
    want = ops.sparse24_gemv(x, values, meta, bias, "fma")
    monkeypatch.setenv("TORCHQUANT_SP24_FMA", variant)
    poison_cuda()
    y = ops.sparse24_gemv(x, values, meta, bias, "fma")
    _check_gemv(y, x, w, bias)
    assert torch.equal(y, want)  # rows per warp change which warp sums a row, not the order


def _mma_case(monkeypatch, N, K, dtype, M, splitk, seed):
    """A 2:4 weight, x and bias on the GPU for the mma GEMV knob tests; the default block
    shape, and TORCHQUANT_SP24_SPLITK = splitk (None: unset, the rule)."""
    values, meta, w = _sparse_weight(N, K, dtype, seed=seed + M)
    x = torch.randn(M, K, generator=_gen(seed + 1 + M)).to(dtype).cuda()
    bias = torch.randn(N, generator=_gen(seed + 2)).to(dtype).cuda()
    monkeypatch.delenv("TORCHQUANT_SP24_MMA", raising=False)
    if splitk is None:
        monkeypatch.delenv("TORCHQUANT_SP24_SPLITK", raising=False)
    else:
        monkeypatch.setenv("TORCHQUANT_SP24_SPLITK", splitk)
    return values.cuda(), meta.cuda(), w.cuda(), x, bias


@requires_cuda
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("shape", ["bn64s3", "bn64s4", "bn128s3", "bn128s4"])
@pytest.mark.parametrize("splitk", ["1", "2", "3", "9", None])
@pytest.mark.parametrize("M", [3, 8, 9, 16, 25])
def test_cuda_gemv_mma_launch_shapes(monkeypatch, dtype, shape, splitk, M):
    """The mma.sp GEMV with every block shape and ring depth (TORCHQUANT_SP24_MMA) and K
    split across blocks (TORCHQUANT_SP24_SPLITK; None = the rule): within the bound,
    deterministic, and for one split every block shape runs the same mma chain per output,
    so bit for bit the default shape's output. N = 197 (not a multiple of 64 or 128),
    K = 1056 = 9 chunks of 128 with a one-step tail (splits of 5 + 4, 3 x 3, 9 x 1),
    M = 25 (two 16-row tiles, the second partial)."""
    if not HAS_SM80:
        pytest.skip("the mma path needs sm_80")
    values, meta, w, x, bias = _mma_case(monkeypatch, 197, 1056, dtype, M, splitk, seed=17)
    want = ops.sparse24_gemv(x, values, meta, bias, "mma")
    monkeypatch.setenv("TORCHQUANT_SP24_MMA", shape)
    for b in (bias, None):
        poison_cuda()
        y = ops.sparse24_gemv(x, values, meta, b, "mma")
        _check_gemv(y, x, w, b)
        assert torch.equal(y, ops.sparse24_gemv(x, values, meta, b, "mma"))  # deterministic
    assert torch.equal(ops.sparse24_gemv(x, values, meta, bias, "mma"), want)


@requires_cuda
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("splitk", ["1", "3", None])
@pytest.mark.parametrize("M", [1, 3, 8, 9, 16, 25])
def test_cuda_gemv_mma_meta_copy_forms(monkeypatch, dtype, splitk, M):
    """K % 128 == 0: the default mma GEMV stages each row's metadata of a chunk with one
    16-byte copy; TORCHQUANT_SP24_META=4 forces the four 4-byte copies. Same bytes in
    shared memory, same mma chain: bit-identical outputs, within the bound. N = 197 (the
    last block's rows past N re-read row N - 1), K = 1024 (8 chunks; splits of 3 + 3 + 2)."""
    if not HAS_SM80:
        pytest.skip("the mma path needs sm_80")
    values, meta, w, x, bias = _mma_case(monkeypatch, 197, 1024, dtype, M, splitk, seed=23)
    monkeypatch.setenv("TORCHQUANT_SP24_META", "4")
    want = ops.sparse24_gemv(x, values, meta, bias, "mma")
    monkeypatch.delenv("TORCHQUANT_SP24_META")
    poison_cuda()
    y = ops.sparse24_gemv(x, values, meta, bias, "mma")
    _check_gemv(y, x, w, bias)
    assert torch.equal(y, want)


@requires_cuda
def test_cuda_gemv_mma_launch_shape_knob_rejects_unknown(monkeypatch):
    if not HAS_SM80:
        pytest.skip("the mma path needs sm_80")
    values, meta, _ = _sparse_weight(64, 128, torch.bfloat16, seed=3)
    x = torch.randn(4, 128, dtype=torch.bfloat16, device="cuda")
    monkeypatch.setenv("TORCHQUANT_SP24_MMA", "bn32s9")
    with pytest.raises(RuntimeError, match="TORCHQUANT_SP24_MMA must be"):
        ops.sparse24_gemv(x, values.cuda(), meta.cuda(), None, "mma")


@requires_cuda
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("K", [4, 12, 20, 1028])
@pytest.mark.parametrize("M", [1, 3, 6, 16])
def test_cuda_gemv_k_not_multiple_of_16_or_32(dtype, K, M):
    """K % 16 != 0 runs the scalar fma variant; auto must pick it, a forced
    'mma' must refuse with a clear message."""
    N = 37
    values, meta, w = _sparse_weight(N, K, dtype, seed=K + M)
    values, meta, w = values.cuda(), meta.cuda(), w.cuda()
    x = torch.randn(M, K, generator=_gen(K * M)).to(dtype).cuda()
    for kernel in ("auto", "fma"):
        poison_cuda()
        _check_gemv(ops.sparse24_gemv(x, values, meta, None, kernel), x, w, None)
    if HAS_SM80:
        with pytest.raises(RuntimeError, match="kernel 'mma' needs K % 32 == 0"):
            ops.sparse24_gemv(x, values, meta, None, "mma")


@requires_cuda
@pytest.mark.parametrize("kernel", _cuda_paths())
def test_cuda_gemv_misaligned_views(kernel):
    """Views with a storage offset (not 16-byte aligned) give the same result."""
    dtype, M, N, K = torch.bfloat16, 5, 70, 256
    values, meta, w = _sparse_weight(N, K, dtype, seed=21)
    x = torch.randn(M, K, generator=_gen(22)).to(dtype)
    y_ref = ops.sparse24_gemv(x.cuda(), values.cuda(), meta.cuda(), None, kernel)
    xs, vs, ms = _shifted_cuda(x), _shifted_cuda(values), _shifted_cuda(meta)
    assert xs.data_ptr() % 16 and vs.data_ptr() % 16 and ms.data_ptr() % 16
    poison_cuda()
    y = ops.sparse24_gemv(xs, vs, ms, None, kernel)
    assert torch.equal(y, y_ref)
    _check_gemv(y, x.cuda(), w.cuda(), None)


@requires_cuda
@pytest.mark.parametrize("kernel", _cuda_paths())
def test_cuda_gemv_deterministic_and_graph_capturable(kernel):
    dtype, M, N, K = torch.float16, 8, 300, 512
    values, meta, _ = _sparse_weight(N, K, dtype, seed=31)
    values, meta = values.cuda(), meta.cuda()
    x = torch.randn(M, K, generator=_gen(32)).to(dtype).cuda()
    y0 = ops.sparse24_gemv(x, values, meta, None, kernel)
    assert torch.equal(ops.sparse24_gemv(x, values, meta, None, kernel), y0)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up outside capture
        ops.sparse24_gemv(x, values, meta, None, kernel)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y_g = ops.sparse24_gemv(x, values, meta, None, kernel)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(y_g, y0)


@requires_cuda
def test_cuda_gemv_matches_dense_on_a_model_shape():
    """One realistic decode shape per dtype, every path (fp16 and bf16)."""
    M, N, K = 1, 4096, 4096
    for dtype in HALF:
        values, meta, w = _sparse_weight(N, K, dtype, seed=41)
        values, meta, w = values.cuda(), meta.cuda(), w.cuda()
        x = torch.randn(M, K, generator=_gen(42)).to(dtype).cuda()
        for kernel in _cuda_paths():
            poison_cuda()
            _check_gemv(ops.sparse24_gemv(x, values, meta, None, kernel), x, w, None)


@requires_cuda
def test_gemv_bad_inputs_cuda():
    values, meta, _ = _sparse_weight(8, 64, torch.float16, seed=3)
    values, meta = values.cuda(), meta.cuda()
    x = torch.randn(2, 64).to(torch.float16).cuda()
    cases = [
        (lambda: ops.sparse24_gemv(x, values.cpu(), meta), "values is on"),
        (lambda: ops.sparse24_gemv(x, values, meta, None, "cpu"), "not a CUDA path"),
        (lambda: ops.sparse24_gemv(x.float(), values, meta), "x must be float16 or bfloat16"),
        (lambda: ops.sparse24_gemv(x, values, meta[:, :4].contiguous()), "meta must be"),
    ]
    for fn, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            fn()


@requires_cuda
def test_gemv_opcheck_cuda():
    values, meta, _ = _sparse_weight(24, 64, torch.bfloat16, seed=5)
    x = torch.randn(3, 64).to(torch.bfloat16).cuda()
    for kernel in _cuda_paths():
        torch.library.opcheck(ops.sparse24_gemv, (x, values.cuda(), meta.cuda(), None, kernel))


# ================================================ sparse24_int8_matmul ====
def _int8_case(M, N, K, seed, sym_a=False, per_row=True):
    """(a_q, a_scale, a_zero, dense pruned int8 weight, w_scale, values, meta)."""
    from torchquant import formats as F

    x = torch.randn(M, K, generator=_gen(seed))
    w = torch.randn(N, K, generator=_gen(seed + 1))
    aq, sa, za = F.quantize_int8(x, per_row, sym_a)
    wq, sw, _ = F.quantize_int8(w, True, True)
    wp, _ = ops.prune24(wq)
    values, meta = ops.compress24(wp)
    return aq, sa, (None if sym_a else za), wp, sw, values, meta


def _int8_variants(N):
    bias32 = torch.randn(N, generator=_gen(N))
    return [
        dict(bias=None, out_dtype=None),
        dict(bias=bias32, out_dtype=torch.float16),
        dict(bias=bias32.to(torch.bfloat16), out_dtype=torch.bfloat16),
        dict(bias=bias32.to(torch.float16), out_dtype=torch.float32),
    ]


@pytest.mark.parametrize("M", [1, 3, 16, 33])
@pytest.mark.parametrize("N,K", [(1, 4), (7, 12), (33, 64), (19, 1028)])
@pytest.mark.parametrize("sym_a", [True, False])
def test_cpu_int8_matches_int8_matmul_on_decompressed_weight(M, N, K, sym_a):
    """The integer core is exact and the epilogue is int8_matmul's: bit-identical."""
    aq, sa, za, wp, sw, values, meta = _int8_case(M, N, K, seed=M * 17 + N + K, sym_a=sym_a)
    for v in _int8_variants(N):
        got = ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw, None, v["bias"], v["out_dtype"], "auto")
        want = ops.int8_matmul(aq, sa, za, wp, sw, None, v["bias"], v["out_dtype"], "auto")
        _assert_bit_equal(got, want)
    if za is not None:  # an explicit w_colsum is the same as the derived one
        cs = wp.to(torch.int32).sum(1).to(torch.int32)
        got = ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw, cs, None, None, "cpu")
        _assert_bit_equal(got, ops.int8_matmul(aq, sa, za, wp, sw, cs, None, None, "auto"))


def test_cpu_int8_scalar_scales():
    aq, sa, za, wp, sw, values, meta = _int8_case(5, 9, 40, seed=3, sym_a=False, per_row=False)
    sw1 = sw[:1].clone()
    got = ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw1, None, None, torch.float32, "auto")
    _assert_bit_equal(got, ops.int8_matmul(aq, sa, za, wp, sw1, None, None, torch.float32, "auto"))


def test_int8_bad_inputs_cpu():
    aq, sa, za, wp, sw, values, meta = _int8_case(2, 8, 64, seed=4)
    f = ops.sparse24_int8_matmul
    cases = [
        (lambda: f(aq.float(), sa, za, values, meta, sw), "a_q must be"),
        (lambda: f(aq, sa, za, values.float(), meta, sw), "w_values must be"),
        (lambda: f(aq, sa, za, values, meta[:, :3].contiguous(), sw), "w_meta must be"),
        (lambda: f(aq[:, :60].contiguous(), sa, za, values, meta, sw), "w_values must be"),
        (lambda: f(aq[:, :62].contiguous(), sa, za, values, meta, sw), "multiple of 4"),
        (lambda: f(aq, sa, za, values, meta, sw[:3].contiguous()), "w_scale must"),
        (lambda: f(aq, sa.double(), za, values, meta, sw), "a_scale must be"),
        (lambda: f(aq, sa, za, values, meta, sw, None, None, torch.int32), "out_dtype"),
        (lambda: f(aq, sa, za, values, meta, sw, None, None, None, "mma"), "not a CPU path"),
    ]
    for fn, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            fn()


def test_int8_opcheck_cpu():
    aq, sa, za, wp, sw, values, meta = _int8_case(3, 24, 64, seed=6)
    torch.library.opcheck(ops.sparse24_int8_matmul, (aq, sa, za, values, meta, sw, None, torch.randn(24), torch.float16, "auto"))
    torch.library.opcheck(ops.sparse24_int8_matmul, (aq, sa, None, values, meta, sw, None, None, None, "auto"))


def _int8_cuda_paths():
    return ["auto", "simt", "gemv"] + (["mma"] if HAS_SM80 else [])


@requires_cuda
@pytest.mark.parametrize("kernel", ["auto", "simt", "gemv", "mma"])
@pytest.mark.parametrize("M", [1, 2, 5, 8, 9, 16, 17, 31, 33, 64, 100])
@pytest.mark.parametrize("sym_a", [True, False])
def test_cuda_int8_bit_exact_vs_cpu(kernel, M, sym_a):
    """Exact int32 core + the same rounded epilogue: CUDA == CPU bit for bit,
    on every path (N = 197 and K = 1056 leave row and K tails on the mma path)."""
    if kernel == "mma" and not HAS_SM80:
        pytest.skip("the mma path needs sm_80")
    N, K = 197, 1056
    aq, sa, za, wp, sw, values, meta = _int8_case(M, N, K, seed=M + 1000 * int(sym_a), sym_a=sym_a)
    d = lambda t: None if t is None else t.cuda()  # noqa: E731
    for v in _int8_variants(N):
        want = ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw, None, v["bias"], v["out_dtype"], "cpu")
        poison_cuda()
        got = ops.sparse24_int8_matmul(d(aq), d(sa), d(za), d(values), d(meta), d(sw), None, d(v["bias"]),
                                       v["out_dtype"], kernel)
        _assert_bit_equal(got, want)


@requires_cuda
@pytest.mark.parametrize("sym_a", [True, False])
def test_cuda_int8_gemv_four_rows_per_warp_variant(monkeypatch, sym_a):
    """TORCHQUANT_SP24_FMA=i8w4 (the dp4a GEMV at M = 1 with 4 weight rows per warp instead of
    2, an A/B knob): still bit for bit the CPU kernel."""
    N, K = 197, 1056
    aq, sa, za, wp, sw, values, meta = _int8_case(1, N, K, seed=77 + int(sym_a), sym_a=sym_a)
    d = lambda t: None if t is None else t.cuda()  # noqa: E731
    monkeypatch.setenv("TORCHQUANT_SP24_FMA", "i8w4")
    for v in _int8_variants(N):
        want = ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw, None, v["bias"], v["out_dtype"], "cpu")
        poison_cuda()
        got = ops.sparse24_int8_matmul(d(aq), d(sa), d(za), d(values), d(meta), d(sw), None, d(v["bias"]),
                                       v["out_dtype"], "gemv")
        _assert_bit_equal(got, want)


def _int8_mma_run(monkeypatch, case, env, bias, out_dtype):
    """sparse24_int8_matmul on path "mma" with the environment `env` (VAR -> value, None =
    unset) set around one poisoned launch."""
    aq, sa, za, values, meta, sw = case
    for k, v in env.items():
        if v is None:
            monkeypatch.delenv(k, raising=False)
        else:
            monkeypatch.setenv(k, v)
    poison_cuda()
    return ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw, None, bias, out_dtype, "mma")


@requires_cuda
@pytest.mark.parametrize("shape", ["bn64s3k128", "bn128s4k128", "bn128s3k256", "bn128s4k256"])
@pytest.mark.parametrize("splitk", ["1", "2", "3", None])
@pytest.mark.parametrize("K", [1056, 1152])
@pytest.mark.parametrize("M", [3, 8, 9, 16, 25])
def test_cuda_int8_mma_launch_shapes(monkeypatch, shape, splitk, K, M):
    """The int8 mma.sp kernel with every block shape / ring depth / chunk size
    (TORCHQUANT_SP24_I8MMA; M = 25 keeps the 64-row shape whatever the knob says) and K split
    across blocks (TORCHQUANT_SP24_SPLITK; None = the rule: 2 splits of the 128-K chunks here):
    the int32 sums are exact in any grouping, so every launch is bit for bit the CPU kernel,
    asymmetric activations, bias and all three output types. N = 197 (partial 64- and
    128-row blocks); K = 1056 (33 steps of 32: a one-step tail after 4 chunks of 256 or 8 of
    128; 4-byte metadata copies) and K = 1152 (K % 128 == 0 but not % 256: the 16-byte
    metadata copies of the default shape with a half last chunk)."""
    if not HAS_SM80:
        pytest.skip("the mma path needs sm_80")
    N = 197
    aq, sa, za, wp, sw, values, meta = _int8_case(M, N, K, seed=K + M, sym_a=False)
    d = lambda t: None if t is None else t.cuda()  # noqa: E731
    case = (d(aq), d(sa), d(za), d(values), d(meta), d(sw))
    env = {"TORCHQUANT_SP24_I8MMA": shape, "TORCHQUANT_SP24_SPLITK": splitk,
           "TORCHQUANT_SP24_META": None}
    for v in _int8_variants(N):
        want = ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw, None, v["bias"], v["out_dtype"], "cpu")
        got = _int8_mma_run(monkeypatch, case, env, d(v["bias"]), v["out_dtype"])
        _assert_bit_equal(got, want)


@requires_cuda
@pytest.mark.parametrize("K", [1024, 1152])
@pytest.mark.parametrize("M", [1, 8, 16])
def test_cuda_int8_mma_meta_copy_forms(monkeypatch, K, M):
    """K % 128 == 0: the default int8 mma shape copies metadata as 16-byte units;
    TORCHQUANT_SP24_META=4 forces 4-byte copies. Both bit for bit the CPU kernel."""
    if not HAS_SM80:
        pytest.skip("the mma path needs sm_80")
    N = 197
    aq, sa, za, wp, sw, values, meta = _int8_case(M, N, K, seed=3 * K + M, sym_a=True)
    d = lambda t: None if t is None else t.cuda()  # noqa: E731
    case = (d(aq), d(sa), d(za), d(values), d(meta), d(sw))
    want = ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw, None, None, torch.bfloat16, "cpu")
    for form in ("4", None):
        env = {"TORCHQUANT_SP24_I8MMA": None, "TORCHQUANT_SP24_SPLITK": None,
               "TORCHQUANT_SP24_META": form}
        _assert_bit_equal(_int8_mma_run(monkeypatch, case, env, None, torch.bfloat16), want)


@requires_cuda
def test_cuda_int8_mma_launch_shape_knob_rejects_unknown(monkeypatch):
    if not HAS_SM80:
        pytest.skip("the mma path needs sm_80")
    aq, sa, za, wp, sw, values, meta = _int8_case(4, 64, 256, seed=9)
    d = lambda t: None if t is None else t.cuda()  # noqa: E731
    monkeypatch.setenv("TORCHQUANT_SP24_I8MMA", "bn128s4")
    with pytest.raises(RuntimeError, match="TORCHQUANT_SP24_I8MMA must be"):
        ops.sparse24_int8_matmul(d(aq), d(sa), d(za), d(values), d(meta), d(sw), None, None, None, "mma")


@requires_cuda
@pytest.mark.parametrize("N,K", [(1, 32), (7, 64), (64, 128), (65, 4096), (33, 4), (9, 12), (17, 1028)])
def test_cuda_int8_shapes_every_path(N, K):
    M = 7
    aq, sa, za, wp, sw, values, meta = _int8_case(M, N, K, seed=N + K)
    want = ops.int8_matmul(aq, sa, za, wp, sw, None, None, None, "auto")
    d = lambda t: None if t is None else t.cuda()  # noqa: E731
    for kernel in _int8_cuda_paths():
        if kernel in ("mma", "gemv") and K % 32:
            with pytest.raises(RuntimeError, match=f"kernel '{kernel}' needs K % 32 == 0"):
                ops.sparse24_int8_matmul(d(aq), d(sa), d(za), d(values), d(meta), d(sw), None, None, None, kernel)
            continue
        poison_cuda()
        got = ops.sparse24_int8_matmul(d(aq), d(sa), d(za), d(values), d(meta), d(sw), None, None, None, kernel)
        _assert_bit_equal(got, want)


@requires_cuda
@pytest.mark.parametrize("K", [32, 96, 160])
def test_cuda_int8_reads_the_positions(K):
    """a_q = the K x K identity, unit scales, fp32 out: y[m, n] = W[n, m]
    exactly, so y^T is the weight as the kernel decompressed it. A wrong
    fragment or metadata layout shows up as values at the wrong (row, K);
    the message names the first such group (pins the layout, not just the
    fact of a mismatch). K = 32 / 96 / 160: 1 / 3 / 5 steps of 32 (160 =
    one full 128-K chunk + a 32-K tail); M = K > 64 gives 2 / 3 token tiles
    on the mma path; N = 24 leaves a partial 64-row block."""
    N, M = 24, K
    w = torch.randint(-127, 128, (N, K), generator=_gen(K)).to(torch.int8)
    w[w == 0] = 1  # every kept value nonzero, so a misplaced one is visible
    wp, _ = ops.prune24(w)
    values, meta = ops.compress24(wp)
    aq = torch.eye(K, dtype=torch.int8)
    sa, sw = torch.ones(M), torch.ones(N)
    d = lambda t: t.cuda()  # noqa: E731
    for kernel in _int8_cuda_paths():
        poison_cuda()
        y = ops.sparse24_int8_matmul(d(aq), d(sa), None, d(values), d(meta), d(sw), None, None,
                                     torch.float32, kernel).cpu()
        seen = y.T.contiguous()
        bad = (seen != wp.float()).nonzero()
        if len(bad):
            n, k = (int(v) for v in bad[0])
            g = k // 4
            raise AssertionError(
                f"path {kernel}: {len(bad)} of {N * K} weight elements read wrong; first at row {n}, "
                f"group {g} (K {4 * g}..{4 * g + 3}, row {'g+8' if n % 16 >= 8 else 'g'} of its 16-row "
                f"tile): want {wp[n, 4 * g:4 * g + 4].tolist()}, kernel used "
                f"{seen[n, 4 * g:4 * g + 4].tolist()}")


@requires_cuda
def test_int8_opcheck_cuda():
    aq, sa, za, wp, sw, values, meta = _int8_case(3, 24, 64, seed=6)
    d = lambda t: t.cuda()  # noqa: E731
    for kernel in _int8_cuda_paths():
        torch.library.opcheck(ops.sparse24_int8_matmul,
                              (d(aq), d(sa), d(za), d(values), d(meta), d(sw), None, None, torch.bfloat16, kernel))


@requires_cuda
def test_cuda_int8_misaligned_views_every_path():
    """Views at odd byte offsets (a_q, values, meta) are copied, not misread."""
    M, N, K = 3, 40, 256
    aq, sa, za, wp, sw, values, meta = _int8_case(M, N, K, seed=77, sym_a=False)
    want = ops.sparse24_int8_matmul(aq, sa, za, values, meta, sw, None, None, None, "cpu")
    for kernel in _int8_cuda_paths():
        poison_cuda()
        got = ops.sparse24_int8_matmul(_shifted_cuda(aq), sa.cuda(), za.cuda(), _shifted_cuda(values),
                                       _shifted_cuda(meta), sw.cuda(), None, None, None, kernel)
        _assert_bit_equal(got, want)
