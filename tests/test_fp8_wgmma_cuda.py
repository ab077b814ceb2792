"""The Hopper dequantizing fp8_block GEMM (torch.ops.torchquant._fp8_block_gemm_sm90a):
y = x @ dequantize_fp8_block(w_q, w_scale, bs, out_dtype=x.dtype)^T (+ bias), the weight
converted in registers and multiplied on wgmma tensor cores with fp32 accumulation.

Its contract is that of dequantize + matmul (QuantLinear's fp8_block prefill, which it
replaces on sm_90): the weight it multiplies is exactly dequantize_fp8_block's (one fp32
product, one rounding to x's dtype). So: an identity activation reads that weight back bit for
bit (pins the fragment layout, the swizzle and the per-step scale), and every output is within
the derived fp32-accumulation bound of a float64 reference over it; odd M / N, K tails
(K % 64 != 0), block sizes 16..256 incl. ones that do not divide K, every tile configuration
forced through TORCHQUANT_DQ_WGMMA_TILE, bias, CUDA-graph capture, misaligned views, bad inputs,
and QuantLinear's dispatch to it. Outputs are poisoned (NaN) before every launch.

Skipped unless the GPU is compute capability 9.0 and torchquant._C_sm90a is loaded.
"""

import pytest
import torch

import torchquant  # noqa: F401  (loads torchquant._C and torchquant._C_sm90a)
from torchquant.reference import fp32_accum_bound, linear_ref
from conftest import graph_replay_matches_eager, poison_cuda, requires_sm90a
from test_sparse24 import _shifted_cuda

ops = torch.ops.torchquant
ENV = "TORCHQUANT_DQ_WGMMA_TILE"
CONFIGS = ["256c2", "256c1", "128c1", "64c1"]
HALF = [torch.float16, torch.bfloat16]
# "1": the regrouped 16-byte epilogue stores (off by default in this kernel; 16-bit y, N % 8 == 0).
VEC_ENV = "TORCHQUANT_WGMMA_VEC"


pytestmark = requires_sm90a("_fp8_block_gemm_sm90a")


@pytest.fixture(autouse=True)
def _default_config(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.delenv("TORCHQUANT_DQ_WGMMA_SPLITS", raising=False)
    monkeypatch.delenv(VEC_ENV, raising=False)


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _case(N, K, bs, dtype, seed):
    """CPU (w_q, w_scale, the dequantized weight in dtype: what the kernel must multiply)."""
    g = _gen(seed)
    # Rows of different magnitude, so the block scales differ by row and by block.
    w = torch.randn(N, K, generator=g) * torch.rand(N, 1, generator=g) * 4
    w_q, w_scale = ops.quantize_fp8_block(w, bs)
    w_dq = ops.dequantize_fp8_block(w_q, w_scale, bs, dtype)
    return w_q, w_scale, w_dq


def _check(y, x, w_dq, bias):
    assert y.shape == (x.shape[0], w_dq.shape[0]) and y.dtype == x.dtype
    y64 = y.cpu().to(torch.float64)
    assert bool(torch.isfinite(y64).all()), "non-finite output (an element left unwritten?)"
    ref = linear_ref(x, w_dq, bias)
    bound = fp32_accum_bound(x, w_dq, bias, x.dtype)
    err = (y64 - ref).abs()
    worst = float((err / bound).max())
    assert bool((err <= bound).all()), f"worst error / bound = {worst:.3g}"


def _run(x, w_q, w_scale, bs, bias):
    poison_cuda()
    return ops._fp8_block_gemm_sm90a(x.cuda(), w_q.cuda(), w_scale.cuda(), bs,
                                     None if bias is None else bias.cuda())


@pytest.mark.parametrize("vec", [None, "1"])
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("K,bs", [(128, 128), (384, 16), (208, 48), (80, 32)])
def test_identity_reads_the_dequantized_weight(monkeypatch, dtype, config, K, bs, vec):
    """x = identity: each output is one exact product, so y^T is the weight bit for bit."""
    monkeypatch.setenv(ENV, config)
    if vec:
        monkeypatch.setenv(VEC_ENV, vec)
    N = 136
    w_q, w_scale, w_dq = _case(N, K, bs, dtype, seed=K + bs)
    y = _run(torch.eye(K, dtype=dtype), w_q, w_scale, bs, None).cpu()
    got, want = y.T.contiguous().float(), w_dq.float()
    if not torch.equal(got, want):  # values: a -0 weight may come back as +0
        bad = (got != want).nonzero()
        n, k = (int(v) for v in bad[0])
        raise AssertionError(f"{len(bad)} weights misread; first feature {n}, k {k}: "
                             f"got {got[n, k].item()}, want {want[n, k].item()}")


CASES = [  # M, N, K, bs
    (1, 197, 512, 128),
    (16, 256, 128, 64),
    (77, 64, 1152, 128),
    (257, 197, 512, 16),
    (130, 300, 208, 48),   # K % 64 != 0, bs does not divide K
    (300, 520, 256, 256),  # bs > K: one partial block
]


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("M,N,K,bs", CASES)
def test_within_bound(monkeypatch, dtype, config, M, N, K, bs):
    monkeypatch.setenv(ENV, config)
    _check_case(dtype, M, N, K, bs)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("M,N,K,bs", [c for c in CASES if c[1] % 8 == 0])
def test_within_bound_vec_stores(monkeypatch, dtype, config, M, N, K, bs):
    monkeypatch.setenv(ENV, config)
    monkeypatch.setenv(VEC_ENV, "1")
    _check_case(dtype, M, N, K, bs)


def _check_case(dtype, M, N, K, bs):
    """Random x, weight and bias of one CASES entry; y within bound with and without the bias."""
    w_q, w_scale, w_dq = _case(N, K, bs, dtype, seed=M + N + K + bs)
    x = torch.randn(M, K, generator=_gen(M * K)).to(dtype)
    bias = torch.randn(N, generator=_gen(N)).to(dtype)
    for b in (None, bias):
        _check(_run(x, w_q, w_scale, bs, b), x, w_dq, b)


SPLIT_ENV = "TORCHQUANT_DQ_WGMMA_SPLITS"


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("splits", [2, 4, 7])
@pytest.mark.parametrize("M,N,K,bs", [(77, 300, 1152, 128), (33, 197, 1152, 48), (130, 64, 512, 16)])
def test_split_k_within_bound(monkeypatch, config, splits, M, N, K, bs):
    """K split across CTAs (fp32 partial sums per split, added in split order by a second
    kernel): splits starting inside a scale block (K = 1152, bs 128, 4 or 7 splits) included."""
    monkeypatch.setenv(ENV, config)
    monkeypatch.setenv(SPLIT_ENV, str(splits))
    dtype = torch.bfloat16 if splits != 4 else torch.float16
    w_q, w_scale, w_dq = _case(N, K, bs, dtype, seed=M + N + K + splits)
    x = torch.randn(M, K, generator=_gen(M + splits)).to(dtype)
    bias = torch.randn(N, generator=_gen(N + 1)).to(dtype)
    for b in (None, bias):
        _check(_run(x, w_q, w_scale, bs, b), x, w_dq, b)


def test_split_k_auto_on_a_small_grid():
    """4096 features at M = 64: 32 tiles for the SMs, so the automatic rule splits K; the result
    is deterministic and within the bound."""
    w_q, w_scale, w_dq = _case(4096, 4096, 128, torch.bfloat16, seed=91)
    x = torch.randn(64, 4096, generator=_gen(92)).to(torch.bfloat16)
    y = _run(x, w_q, w_scale, 128, None)
    _check(y, x, w_dq, None)
    assert torch.equal(y, _run(x, w_q, w_scale, 128, None))


@pytest.mark.parametrize("dtype", HALF)
def test_model_shape_within_bound(dtype):
    M, N, K = 512, 4096, 4096
    w_q, w_scale, w_dq = _case(N, K, 128, dtype, seed=13)
    x = torch.randn(M, K, generator=_gen(14)).to(dtype)
    _check(_run(x, w_q, w_scale, 128, None), x, w_dq, None)


def test_matches_dequantize_then_matmul():
    """The path it replaces: the same weight values, so the two differ by summation order only."""
    w_q, w_scale, w_dq = _case(1000, 1024, 128, torch.bfloat16, seed=5)
    x = torch.randn(200, 1024, generator=_gen(6)).to(torch.bfloat16).cuda()
    wd = ops.dequantize_fp8_block(w_q.cuda(), w_scale.cuda(), 128, torch.bfloat16)
    assert torch.equal(wd.cpu(), w_dq)
    y = ops._fp8_block_gemm_sm90a(x, w_q.cuda(), w_scale.cuda(), 128, None)
    _check(y, x.cpu(), w_dq, None)


def test_graph_capture_and_determinism():
    w_q, w_scale, _ = _case(520, 512, 128, torch.bfloat16, seed=21)
    x = torch.randn(300, 512, generator=_gen(22)).to(torch.bfloat16).cuda()
    wq, ws = w_q.cuda(), w_scale.cuda()
    graph_replay_matches_eager(lambda: ops._fp8_block_gemm_sm90a(x, wq, ws, 128, None))


def test_misaligned_views_are_copied():
    w_q, w_scale, w_dq = _case(64, 256, 128, torch.float16, seed=31)
    x = torch.randn(40, 256, generator=_gen(32)).to(torch.float16)
    poison_cuda()
    y = ops._fp8_block_gemm_sm90a(_shifted_cuda(x), _shifted_cuda(w_q), w_scale.cuda(), 128, None)
    _check(y, x, w_dq, None)


def test_bad_inputs(monkeypatch):
    w_q, w_scale, _ = _case(32, 128, 128, torch.float16, seed=41)
    x = torch.randn(4, 128).to(torch.float16).cuda()
    wq, ws = w_q.cuda(), w_scale.cuda()
    with pytest.raises(RuntimeError, match="fp8_block_gemm: x must be float16 or bfloat16"):
        ops._fp8_block_gemm_sm90a(x.float(), wq, ws, 128, None)
    with pytest.raises(RuntimeError, match="fp8_block_gemm: block_size must be a multiple of 16"):
        ops._fp8_block_gemm_sm90a(x, wq, ws, 40, None)
    with pytest.raises(RuntimeError, match="their K differ"):
        ops._fp8_block_gemm_sm90a(x[:, :64].contiguous(), wq, ws, 128, None)
    with pytest.raises(RuntimeError, match="w_scale must be"):
        ops._fp8_block_gemm_sm90a(x, wq, ws[:, :0].contiguous(), 128, None)
    with pytest.raises(RuntimeError, match="contiguous"):
        ops._fp8_block_gemm_sm90a(x, wq.t(), ws, 128, None)
    with pytest.raises(RuntimeError, match="bias"):
        ops._fp8_block_gemm_sm90a(x, wq, ws, 128, torch.zeros(33, dtype=torch.float16, device="cuda"))
    with pytest.raises(RuntimeError):  # no CPU kernel: the dispatcher names the backend
        ops._fp8_block_gemm_sm90a(x.cpu(), w_q, w_scale, 128, None)
    monkeypatch.setenv(ENV, "64c9")
    with pytest.raises(RuntimeError, match="TORCHQUANT_DQ_WGMMA_TILE='64c9'"):
        ops._fp8_block_gemm_sm90a(x, wq, ws, 128, None)
    monkeypatch.delenv(ENV)
    monkeypatch.setenv(SPLIT_ENV, "0")
    with pytest.raises(RuntimeError, match="TORCHQUANT_DQ_WGMMA_SPLITS='0'"):
        ops._fp8_block_gemm_sm90a(x, wq, ws, 128, None)


def test_opcheck():
    w_q, w_scale, _ = _case(40, 256, 64, torch.bfloat16, seed=51)
    x = torch.randn(9, 256).to(torch.bfloat16)
    # test_schema is left out: it re-runs the op on mutated copies, and torch has no fp8 mul.
    torch.library.opcheck(ops._fp8_block_gemm_sm90a, (x.cuda(), w_q.cuda(), w_scale.cuda(), 64, None),
                          test_utils=("test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"))


def test_quantlinear_prefill_takes_it():
    """QuantLinear fp8_block from FP8_WGMMA_MIN_M on runs this kernel on sm_90 (every N up to
    FP8_WGMMA_SMALL_N_MAX_M, large N beyond), within the bound of the dequantize path's weight;
    fullgraph torch.compile has no graph break."""
    from torchquant.nn import QuantLinear
    from torchquant.nn.dispatch import FP8_WGMMA_MIN_M, FP8_WGMMA_MIN_N, FP8_WGMMA_SMALL_N_MAX_M, choose_path

    dev = torch.device("cuda")
    assert choose_path("fp8_block", FP8_WGMMA_MIN_M, dev, k=256, n=200) == "dq_wgmma"
    assert choose_path("fp8_block", FP8_WGMMA_SMALL_N_MAX_M + 1, dev, k=256, n=200) == "dequant_mm"
    assert choose_path("fp8_block", 4096, dev, k=256, n=FP8_WGMMA_MIN_N) == "dq_wgmma"
    lin = torch.nn.Linear(256, 200, bias=True, dtype=torch.bfloat16)
    q = QuantLinear.from_float(lin, format="fp8_block").cuda()
    x = torch.randn(FP8_WGMMA_MIN_M + 3, 256, generator=_gen(71)).to(torch.bfloat16).cuda()
    poison_cuda()
    y = q(x)
    w_dq = q.dequantized_weight(torch.bfloat16).cpu()
    _check(y, x.cpu(), w_dq, q.bias.cpu().to(torch.bfloat16))
    want = ops._fp8_block_gemm_sm90a(x, q.weight_q, q.weight_scale, q.block_size, q.bias.to(torch.bfloat16))
    assert torch.equal(y, want)  # the layer ran exactly this kernel
    compiled = torch.compile(q, fullgraph=True)
    assert torch.equal(compiled(x), y)


# ---------------------------------------------------------------------------------------------
# The tiled weight (fp8_block_tile; tiled=True): read in place through a 4-D tensor map whose
# boxes land in shared memory as the row-major boxes do, with the block scales read per tile.
# Same bytes at the same shared-memory addresses and the same scales, so the row-major weight's
# bits, every tile configuration and K split; N % 16 == 0 and K % 64 == 0.
TILED_CASES = [  # M, N, K, bs, splits (None: the rule)
    (1, 208, 512, 128, None),
    (77, 144, 1152, 48, None),    # bs does not divide K
    (130, 528, 256, 16, None),    # 33 tiles: the last feature tile 16 rows deep, the rest zero-filled
    (300, 64, 256, 256, None),    # bs > K
    (64, 4096, 1024, 128, None),  # 32 feature tiles: the rule splits K
    (33, 400, 1152, 128, 7),      # splits starting inside a scale block
]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("M,N,K,bs,splits", TILED_CASES)
def test_tiled_weight_gives_the_rows_bits(monkeypatch, config, M, N, K, bs, splits):
    monkeypatch.setenv(ENV, config)
    if splits:
        monkeypatch.setenv(SPLIT_ENV, str(splits))
    dtype = torch.bfloat16 if (M + N) % 2 else torch.float16
    w_q, w_scale, w_dq = _case(N, K, bs, dtype, seed=M + N + K + bs)
    wt, st = (t.cuda() for t in ops.fp8_block_tile(w_q, w_scale, False))
    x = torch.randn(M, K, generator=_gen(M + K)).to(dtype).cuda()
    bias = torch.randn(N, generator=_gen(N + 3)).to(dtype).cuda()
    for b in (None, bias):
        poison_cuda()
        want = ops._fp8_block_gemm_sm90a(x, w_q.cuda(), w_scale.cuda(), bs, b)
        poison_cuda()
        got = ops._fp8_block_gemm_sm90a(x, wt, st, bs, b, True)
        assert torch.equal(got, want), (b is not None, int((got != want).sum()))
        _check(got, x.cpu(), w_dq, None if b is None else b.cpu())


@pytest.mark.parametrize("dtype", HALF)
def test_tiled_identity_reads_the_dequantized_weight(dtype):
    """x = identity on the tiled weight: y^T is the row-major dequantized weight bit for bit
    (the 4-D map's box lands row by row where the 2-D one does, scales per tile)."""
    N, K, bs = 272, 320, 64
    w_q, w_scale, w_dq = _case(N, K, bs, dtype, seed=61)
    wt, st = (t.cuda() for t in ops.fp8_block_tile(w_q, w_scale, False))
    poison_cuda()
    y = ops._fp8_block_gemm_sm90a(torch.eye(K, dtype=dtype, device="cuda"), wt, st, bs, None, True)
    assert torch.equal(y.T.contiguous().float().cpu(), w_dq.float())


def test_tiled_graph_capture():
    w_q, w_scale, _ = _case(512, 512, 128, torch.bfloat16, seed=63)
    wt, st = (t.cuda() for t in ops.fp8_block_tile(w_q, w_scale, False))
    x = torch.randn(200, 512, generator=_gen(64)).to(torch.bfloat16).cuda()
    graph_replay_matches_eager(lambda: ops._fp8_block_gemm_sm90a(x, wt, st, 128, None, True))


def test_tiled_refusals_and_opcheck():
    w_q, w_scale, _ = _case(200, 256, 128, torch.bfloat16, seed=65)  # N % 16 != 0
    x = torch.randn(20, 256).to(torch.bfloat16).cuda()
    with pytest.raises(RuntimeError, match=r"fp8_block_gemm: the tiled fp8 weight needs N % 16 == 0"):
        ops._fp8_block_gemm_sm90a(x, w_q.cuda(), w_scale.cuda(), 128, None, True)
    w_q, w_scale, _ = _case(64, 208, 16, torch.bfloat16, seed=66)  # K % 64 != 0
    with pytest.raises(RuntimeError, match=r"K % 64 == 0.*K = 208"):
        ops._fp8_block_gemm_sm90a(torch.randn(3, 208).to(torch.bfloat16).cuda(), w_q.cuda(), w_scale.cuda(), 16,
                                  None, True)
    w_q, w_scale, _ = _case(48, 256, 64, torch.bfloat16, seed=67)
    wt, st = ops.fp8_block_tile(w_q, w_scale, False)
    torch.library.opcheck(ops._fp8_block_gemm_sm90a, (x.cuda(), wt.cuda(), st.cuda(), 64, None, True),
                          test_utils=("test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"))
