"""The nvfp4 weight through the Hopper dequantizing wgmma GEMM
(torch.ops.torchquant._nvfp4_gemm_sm90a): nvfp4_gemv's contract, y = global * sum_k x[m, k] *
(e2m1[n, k] * bs[n, k / 16]) (+ bias), with every product exact (E2M1 x E4M3 is exact in the
16-bit A operand, the 2^-7 it carries and the global scale applied to the fp32 sum).

An identity x reads every byte value with every block scale (negative, subnormal, zero) back
bit for bit against dequantize_nvfp4 (pins the E2M1 decode, the scale factor, the fragment
layout and the 32-byte swizzle); random operands stay within the fp32-accumulation bound of a
float64 reference, over odd M / N, both scale-load paths (K % 256 == 0 and not), every tile
configuration, forced K splits; graph capture, misaligned views, bad inputs, and QuantLinear's
dispatch to it. Outputs are poisoned (NaN) before every launch.

Skipped unless the GPU is compute capability 9.0 and torchquant._C_sm90a is loaded.
"""

import pytest
import torch

import torchquant  # noqa: F401
from torchquant import reference as ref
from conftest import graph_replay_matches_eager, poison_cuda, requires_sm90a
from test_nvfp4_cuda import _gen, _scales
from test_sparse24 import _shifted_cuda

ops = torch.ops.torchquant
ENV = "TORCHQUANT_DQ_WGMMA_TILE"
SPLIT_ENV = "TORCHQUANT_DQ_WGMMA_SPLITS"
CONFIGS = ["256c2", "256c1", "128c1", "64c1"]
HALF = [torch.float16, torch.bfloat16]
# "1": the regrouped 16-byte epilogue stores (off by default in this kernel; 16-bit y, N % 8 == 0).
VEC_ENV = "TORCHQUANT_WGMMA_VEC"


pytestmark = requires_sm90a("_nvfp4_gemm_sm90a")


@pytest.fixture(autouse=True)
def _default_config(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.delenv(SPLIT_ENV, raising=False)
    monkeypatch.delenv(VEC_ENV, raising=False)


def _operands(M, N, K, dtype, seed):
    """CPU operands (test_nvfp4_cuda's recipe: random codes, scales over 2^-9 .. 448 with zeros)."""
    g = _gen(seed)
    wp = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8, generator=g)
    ws = _scales(N, K // 16, g)
    gs = torch.tensor(0.0123 * (1.0 + torch.rand(1, generator=g).item()))
    return torch.randn(M, K, generator=g).to(dtype), wp, ws, gs, torch.randn(N, generator=g).to(dtype)


def _run(x, wp, ws, gs, b):
    poison_cuda()
    return ops._nvfp4_gemm_sm90a(x.cuda(), wp.cuda(), ws.cuda(), gs.cuda(), None if b is None else b.cuda())


def _check(y, x, wp, ws, gs, b):
    assert y.dtype == x.dtype and y.shape == (x.shape[0], wp.shape[0])
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    want = ref.linear_ref(x, wd, b)
    bound = ref.fp32_accum_bound(x, wd, b, x.dtype)
    frac = ref.worst_fraction(y.cpu(), want, bound)
    assert frac <= 1.0, f"worst error / bound = {frac}"


@pytest.mark.parametrize("vec", [None, "1"])
@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("K", [192, 256])  # per-stage scale words / 16-byte scale groups
def test_identity_decodes_every_byte(monkeypatch, dtype, config, K, vec):
    monkeypatch.setenv(ENV, config)
    if vec:
        monkeypatch.setenv(VEC_ENV, vec)
    N = 136
    wp = ((torch.arange(N * K // 2) * 37 + 11) % 256).to(torch.uint8).reshape(N, K // 2)
    ws = _scales(N, K // 16, _gen(K), negative=True)
    gs = torch.tensor(0.0123)
    want = ops.dequantize_nvfp4(wp, ws, gs, dtype).t()  # [K, N]
    y = _run(torch.eye(K, dtype=dtype), wp, ws, gs, None).cpu()
    assert y.dtype == dtype and y.shape == (K, N)
    if not torch.equal(y, want):  # values: a -0 weight may come out as +0
        bad = (y != want).nonzero()
        k, n = (int(v) for v in bad[0])
        raise AssertionError(f"{len(bad)} weights misread; first k {k}, feature {n}: "
                             f"got {y[k, n].item()}, want {want[k, n].item()}")


CASES = [(1, 197, 512), (16, 256, 64), (77, 64, 1152), (257, 197, 320), (130, 300, 1024)]


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("M,N,K", CASES)
def test_within_bound(monkeypatch, dtype, config, M, N, K):
    monkeypatch.setenv(ENV, config)
    _check_case(dtype, M, N, K)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("M,N,K", [c for c in CASES if c[1] % 8 == 0])
def test_within_bound_vec_stores(monkeypatch, dtype, config, M, N, K):
    monkeypatch.setenv(ENV, config)
    monkeypatch.setenv(VEC_ENV, "1")
    _check_case(dtype, M, N, K)


def _check_case(dtype, M, N, K):
    """Operands of one CASES entry; y within bound with and without the bias."""
    x, wp, ws, gs, bias = _operands(M, N, K, dtype, seed=M + N + K)
    for b in (None, bias):
        _check(_run(x, wp, ws, gs, b), x, wp, ws, gs, b)


@pytest.mark.parametrize("config", ["128c1", "64c1", "256c2"])
@pytest.mark.parametrize("splits", [2, 3, 5])
@pytest.mark.parametrize("M,N,K", [(33, 197, 1536), (70, 64, 1152)])
def test_split_k_within_bound(monkeypatch, config, splits, M, N, K):
    """K 1536 (16-byte scale groups: splits start at multiples of 4 stages) and 1152 (per-stage
    scale words: splits start anywhere)."""
    monkeypatch.setenv(ENV, config)
    monkeypatch.setenv(SPLIT_ENV, str(splits))
    dtype = torch.bfloat16 if splits != 3 else torch.float16
    x, wp, ws, gs, bias = _operands(M, N, K, dtype, seed=M + splits)
    for b in (None, bias):
        _check(_run(x, wp, ws, gs, b), x, wp, ws, gs, b)


def test_model_shape_deterministic():
    """4096 x 4096 at M = 64 (the automatic K split) and 512: within the bound, and the same
    bits on a second call (fixed reduction order)."""
    for M in (64, 512):
        x, wp, ws, gs, _ = _operands(M, 4096, 4096, torch.bfloat16, seed=M)
        y = _run(x, wp, ws, gs, None)
        _check(y, x, wp, ws, gs, None)
        assert torch.equal(y, _run(x, wp, ws, gs, None))  # deterministic


def test_graph_capture():
    x, wp, ws, gs, _ = _operands(300, 520, 512, torch.bfloat16, seed=21)
    x, wp, ws, gs = x.cuda(), wp.cuda(), ws.cuda(), gs.cuda()  # no host copies inside the capture
    graph_replay_matches_eager(lambda: ops._nvfp4_gemm_sm90a(x, wp, ws, gs, None))


def test_misaligned_views_are_copied():
    x, wp, ws, gs, _ = _operands(40, 64, 256, torch.float16, seed=31)
    poison_cuda()
    y = ops._nvfp4_gemm_sm90a(_shifted_cuda(x), _shifted_cuda(wp), _shifted_cuda(ws), gs.cuda(), None)
    _check(y, x, wp, ws, gs, None)


def test_bad_inputs():
    x, wp, ws, gs, _ = _operands(4, 32, 96, torch.float16, seed=41)  # K % 64 != 0
    with pytest.raises(RuntimeError, match="nvfp4_gemm: K must be a multiple of 64"):
        ops._nvfp4_gemm_sm90a(x.cuda(), wp.cuda(), ws.cuda(), gs.cuda(), None)
    x, wp, ws, gs, _ = _operands(4, 32, 128, torch.float16, seed=42)
    with pytest.raises(RuntimeError, match="nvfp4_gemm: x must be float16 or bfloat16"):
        ops._nvfp4_gemm_sm90a(x.float().cuda(), wp.cuda(), ws.cuda(), gs.cuda(), None)
    with pytest.raises(RuntimeError, match="global_scale must hold one element"):
        ops._nvfp4_gemm_sm90a(x.cuda(), wp.cuda(), ws.cuda(), torch.ones(2, device="cuda"), None)
    with pytest.raises(RuntimeError):  # no CPU kernel: the dispatcher names the backend
        ops._nvfp4_gemm_sm90a(x, wp, ws, gs, None)


def test_opcheck():
    x, wp, ws, gs, _ = _operands(9, 40, 256, torch.bfloat16, seed=51)
    # test_schema is left out: it re-runs the op on mutated copies, and torch has no fp8 mul.
    torch.library.opcheck(ops._nvfp4_gemm_sm90a, (x.cuda(), wp.cuda(), ws.cuda(), gs.cuda(), None),
                          test_utils=("test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"))


@pytest.mark.parametrize("dtype", HALF)
def test_quantlinear_takes_it(dtype):
    """QuantLinear nvfp4 from NVFP4_WGMMA_MIN_M on runs this kernel on sm_90 (K % 64 == 0), within
    the bound of the float64 reference over its own weight, bit for bit the op's output; fullgraph
    torch.compile has no graph break. K % 64 != 0 keeps nvfp4_gemv."""
    from torchquant.nn import QuantLinear
    from torchquant.nn.dispatch import NVFP4_WGMMA_MIN_M, choose_path

    dev = torch.device("cuda")
    lin = torch.nn.Linear(320, 200, bias=True, dtype=dtype)
    q = QuantLinear.from_float(lin, format="nvfp4").cuda()
    assert choose_path("nvfp4", NVFP4_WGMMA_MIN_M, dev, k=320, n=200) == "dq_wgmma"
    x = torch.randn(NVFP4_WGMMA_MIN_M + 5, 320, generator=_gen(71)).to(dtype).cuda()
    poison_cuda()
    y = q(x)
    b = q.bias.to(dtype)
    gs = q.weight_global_scale
    # the layer keeps its weight in the bf16 / fp16 decode order (nvfp4_layout="auto" on a GPU: 3 / 2)
    assert q.nvfp4_layout == (3 if dtype == torch.bfloat16 else 2)
    _check(y, x.cpu(), q._packed_layout0().cpu(), q.weight_scale.cpu(), gs.cpu(), b.cpu())
    want = ops._nvfp4_gemm_sm90a(x, q.weight_packed, q.weight_scale, gs, b, q.nvfp4_layout)
    assert torch.equal(y, want)  # the layer ran exactly this kernel
    compiled = torch.compile(q, fullgraph=True)
    assert torch.equal(compiled(x), y)
    # K = 336 (a multiple of 16, not of 64): the GEMV, which accepts it.
    lin2 = torch.nn.Linear(336, 40, bias=False, dtype=dtype)
    q2 = QuantLinear.from_float(lin2, format="nvfp4").cuda()
    assert choose_path("nvfp4", NVFP4_WGMMA_MIN_M, dev, k=336, n=40) == "gemv"
    x2 = torch.randn(NVFP4_WGMMA_MIN_M, 336, generator=_gen(72)).to(dtype).cuda()
    want2 = ops.nvfp4_gemv(x2, q2.weight_packed, q2.weight_scale, q2.weight_global_scale, None, "auto",
                           q2.nvfp4_layout)
    assert torch.equal(q2(x2), want2)


@pytest.mark.parametrize("layout,dtype", [(1, torch.bfloat16), (2, torch.float16), (3, torch.bfloat16)],
                         ids=["l1-bf16", "l2-fp16", "l3-bf16"])
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("splits", ["", "3"])
@pytest.mark.parametrize("M,N,K", [(33, 197, 1536), (70, 64, 1152), (300, 520, 512)])
def test_layout_same_bits(monkeypatch, layout, dtype, config, splits, M, N, K):
    """layouts 1 / 2 / 3 (nvfp4_relayout; each lane's two codes of a word read by bf16_l1_adjacent /
    f16_l2_adjacent / bf16_l3_adjacent): the layout-0 bits at every tile and K split, bias or
    none; x of the other dtype and bad layouts raise."""
    monkeypatch.setenv(ENV, config)
    monkeypatch.setenv(SPLIT_ENV, splits)
    x, wp, ws, gs, bias = _operands(M, N, K, dtype, seed=M + N + K)
    wl = ops.nvfp4_relayout(wp, layout).cuda()
    xc, wsc, gsc = x.cuda(), ws.cuda(), gs.cuda()
    for b in (None, bias.cuda()):
        y0 = _run(x, wp, ws, gs, b)
        poison_cuda()
        assert torch.equal(ops._nvfp4_gemm_sm90a(xc, wl, wsc, gsc, b, layout), y0)
    other = torch.float16 if dtype == torch.bfloat16 else torch.bfloat16
    with pytest.raises(RuntimeError, match="decode order and needs"):
        ops._nvfp4_gemm_sm90a(xc.to(other), wl, wsc, gsc, None, layout)
    with pytest.raises(RuntimeError, match="layout must be 0"):
        ops._nvfp4_gemm_sm90a(xc, wl, wsc, gsc, None, 4)
