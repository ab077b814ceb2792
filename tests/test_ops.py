"""Every op through torch.ops.torchquant on CPU (and CUDA where present):
opcheck, bit-exactness against the pure-torch formats, numerics against the
float64 references with derived bounds, and clear errors for bad input.
"""

import os
import re

import pytest
import torch

import torchquant  # noqa: F401
from torchquant import formats as F
from torchquant import reference as ref
from torchquant.ops import _CUDA_PATHS

from conftest import HAS_CUDA

ops = torch.ops.torchquant
DEVICES = ["cpu"] + (["cuda"] if HAS_CUDA else [])


def _rand(*shape, seed=0, dtype=torch.float32, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype).to(device)


# ------------------------------------------------------------- opcheck ----
def _opcheck_cases(device):
    x = _rand(5, 64, seed=1, device=device)
    w = _rand(24, 64, seed=2, device=device)
    aq, sa, za = F.quantize_int8(x.cpu(), True, False)
    wq, sw, _ = F.quantize_int8(w.cpu(), True, True)
    cs = F.int8_colsum(wq)
    d = lambda t: t.to(device)  # noqa: E731
    fq, fs = F.quantize_fp8_block(w.cpu(), 32)
    pk, bs, g = F.quantize_nvfp4(w.cpu())
    xh = x.to(torch.float16)
    pruned, _ = F.prune24(w.cpu())
    vals, meta = F.compress24(pruned)
    hv, hm = F.compress24(F.prune24(w.cpu().half())[0])
    iv, im = F.compress24(F.prune24(wq)[0])
    tq, ts = F.quantize_fp8_block(_rand(32, 128, seed=6), 64)  # N % 16, K % 64: tileable
    tqt, tst = ops.fp8_block_tile(tq, ts)
    # on CUDA the tiled weight runs on the mma kernels (sm_80+)
    tiled_gemv = device == "cpu" or torch.cuda.get_device_capability() >= (8, 0)
    return [
        (ops.int8_matmul, (d(aq), d(sa), d(za), d(wq), d(sw), d(cs), d(_rand(24, seed=3)), torch.float16, "auto")),
        (ops.int8_matmul, (d(aq), d(sa), None, d(wq), d(sw), None, None, None, "auto")),
        (ops.int8_matmul, (d(aq), d(sa), None, d(wq), d(sw), None, None, None, "auto", True)),
        (ops.quantize_int8, (x, True, False)),
        (ops.quantize_int8, (x, False, True)),
        (ops.fp8_block_gemv, (xh, d(fq), d(fs), 32, None, "auto")),
        (ops.fp8_block_gemv, (xh, d(fq), d(fs), 32, None, "auto", True)),
        (ops.fp8_block_tile, (d(tq), d(ts), False)),
        (ops.fp8_block_tile, (d(tqt), d(tst), True)),
        *([(ops.fp8_block_gemv, (d(_rand(3, 128, seed=7).bfloat16()), d(tqt), d(tst), 64, None, "auto", False, True))]
          if tiled_gemv else []),
        (ops.quantize_fp8_block, (w, 32)),
        (ops.quantize_fp8_act, (xh, 32)),
        (ops.dequantize_fp8_block, (d(fq), d(fs), 32, torch.bfloat16)),
        (ops.nvfp4_gemv, (xh, d(pk), d(bs), d(g), d(_rand(24, seed=4, dtype=torch.float16)), "auto")),
        (ops.nvfp4_gemv, (x.to(torch.bfloat16), d(F.relayout_nvfp4(pk, 1)), d(bs), d(g), None, "auto", 1)),
        (ops.nvfp4_gemv, (x.to(torch.bfloat16), d(F.relayout_nvfp4(pk, 1)), d(bs), d(g), None, "auto", 1, True)),
        (ops.nvfp4_gemv, (xh, d(F.relayout_nvfp4(pk, 2)), d(bs), d(g), None, "auto", 2)),
        (ops.nvfp4_relayout, (d(pk), 1, False)),
        (ops.nvfp4_relayout, (d(pk), 2, False)),
        (ops.nvfp4_relayout, (d(F.relayout_nvfp4(pk, 1)), 1, True)),
        (ops.nvfp4_relayout_scale, (d(bs), 0, False)),
        (ops.quantize_nvfp4, (w,)),
        (ops.dequantize_nvfp4, (d(pk), d(bs), d(g), None)),
        (ops.prune24, (w,)),
        (ops.compress24, (d(pruned),)),
        (ops.decompress24, (d(vals), d(meta))),
        (ops.sparse24_gemv, (xh, d(hv), d(hm), None, "auto")),
        (ops.sparse24_int8_matmul, (d(aq), d(sa), d(za), d(iv), d(im), d(sw), None, None, torch.bfloat16, "auto")),
        (ops.sparse24_int8_matmul, (d(aq), d(sa), None, d(iv), d(im), d(sw), None, None, torch.bfloat16, "auto", True)),
    ]


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_every_op(device):
    fp8 = (torch.float8_e4m3fn,)
    for op, args in _opcheck_cases(device):
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        before = [t.view(torch.uint8).clone() if t.dtype in fp8 else t.clone() for t in tensors]
        utils = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
        outs = op(*args)
        outs = outs if isinstance(outs, tuple) else (outs,)
        if any(t.dtype in fp8 for t in tensors + list(outs)):
            # opcheck's schema test compares tensors with arithmetic torch does
            # not implement for float8 ("mul ... Float8_e4m3fn"); the
            # no-mutation half of it is checked by hand below instead.
            utils = utils[1:]
        torch.library.opcheck(op, args, test_utils=utils)
        after = [t.view(torch.uint8) if t.dtype in fp8 else t for t in tensors]
        assert all(torch.equal(b, a) for b, a in zip(before, after)), f"{op} mutated an input"
    # every schema in the library is covered
    names = {n.split("::")[1].split(".")[0] for n in torch._C._dispatch_get_all_op_names() if n.startswith("torchquant::")}
    covered = {str(op).split(".")[-1] for op, _ in _opcheck_cases(device)}
    # the internal sm_90a ops are tested in their own files (test_int8_wgmma_cuda.py,
    # test_sparse24_wgmma_cuda.py, test_fp8_wgmma_cuda.py, test_nvfp4_wgmma_cuda.py;
    # _fp8_block_gemv_sm90a / _nvfp4_gemv_sm90a as the path "wgmma" of fp8_block_gemv /
    # nvfp4_gemv in test_fp8_cuda.py / test_nvfp4_cuda.py)
    internal = {"_int8_gemm_sm90a", "_sparse24_int8_gemm_sm90a", "_sparse24_gemm_sm90a",
                "_fp8_block_gemm_sm90a", "_nvfp4_gemm_sm90a", "_fp8_block_gemv_sm90a",
                "_nvfp4_gemv_sm90a"}
    assert names - internal <= covered, names - covered


# --------------------------------------------- ops match formats bit-exactly --
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_quantize_ops_match_formats(device, dtype):
    w = (_rand(33, 160, seed=5) * torch.logspace(-2, 1, 160)).to(dtype)
    for per_row in (True, False):
        for sym in (True, False):
            got = ops.quantize_int8(w.to(device), per_row, sym)
            want = F.quantize_int8(w, per_row, sym)
            for g_, w_ in zip(got, want):
                assert g_.shape == w_.shape and torch.equal(g_.cpu(), w_), (per_row, sym)
    for bs in (16, 48, 128, 256):
        q, s = ops.quantize_fp8_block(w.to(device), bs)
        q2, s2 = F.quantize_fp8_block(w, bs)
        assert torch.equal(q.cpu().view(torch.uint8), q2.view(torch.uint8)) and torch.equal(s.cpu(), s2)
        deq = ops.dequantize_fp8_block(q, s, bs, torch.float32)
        assert torch.equal(deq.cpu(), F.dequantize_fp8_block(q2, s2, bs))
    p, b, g = ops.quantize_nvfp4(w.to(device))
    p2, b2, g2 = F.quantize_nvfp4(w)
    assert torch.equal(p.cpu(), p2) and torch.equal(b.cpu().view(torch.uint8), b2.view(torch.uint8))
    assert torch.equal(g.cpu(), g2)
    assert torch.equal(ops.dequantize_nvfp4(p, b, g, None).cpu(), F.dequantize_nvfp4(p2, b2, g2))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.int8, torch.float16, torch.bfloat16, torch.float32])
def test_sparse24_ops_match_formats(device, dtype):
    w = (_rand(17, 44, seed=6) * 40).to(dtype)
    w[0, :4] = w[0, 0]  # ties
    p, m = ops.prune24(w.to(device))
    p2, m2 = F.prune24(w)
    assert torch.equal(p.cpu(), p2) and torch.equal(m.cpu(), m2)
    v, meta = ops.compress24(p)
    v2, meta2 = F.compress24(p2)
    assert torch.equal(v.cpu(), v2) and torch.equal(meta.cpu(), meta2)
    assert torch.equal(ops.decompress24(v, meta).cpu(), p2)


def test_compress24_rejects_three_nonzeros_clearly():
    w = torch.zeros(3, 8)
    w[2, 0:3] = 1
    with pytest.raises(RuntimeError, match="row 2"):
        ops.compress24(w)


# ------------------------------------------------------ numerics vs float64 --
@pytest.mark.parametrize("M", [1, 2, 7, 16, 33])
@pytest.mark.parametrize("K", [16, 100, 272])
def test_int8_matmul_exact_core_and_epilogue(M, K):
    N = 37
    a = _rand(M, K, seed=M * 7 + K)
    w = _rand(N, K, seed=M + K * 3)
    bias = _rand(N, seed=9)
    for sym in (True, False):
        for per_row in (True, False):
            aq, sa, za = F.quantize_int8(torch.relu(a) if not sym else a, per_row, sym)
            wq, sw, _ = F.quantize_int8(w, per_row, True)
            cs = F.int8_colsum(wq)
            z = None if sym else za
            for od in (torch.float32, torch.float16, torch.bfloat16):
                got = ops.int8_matmul(aq, sa, z, wq, sw, cs if z is not None else None, bias, od, "auto")
                assert got.dtype == od and got.shape == (M, N)
                want = ref.int8_matmul_ref(aq, sa, z, wq, sw, cs, bias)
                assert ref.worst_fraction(got, want, ref.int8_epilogue_bound(want, bias, od)) <= 1.0
    # the integer core is exact: unit scales, no zero point, fp32 out, |acc| < 2^24
    one = torch.ones(1)
    acc = ops.int8_matmul(aq, one, None, wq, one, None, None, torch.float32, "auto")
    assert torch.equal(acc.to(torch.int64), ref.int8_acc_ref(aq, wq))


def test_int8_matmul_missing_colsum_is_computed():
    aq = torch.randint(-128, 128, (4, 64), dtype=torch.int8)
    wq = torch.randint(-128, 128, (8, 64), dtype=torch.int8)
    s, z = torch.ones(1), torch.tensor([3], dtype=torch.int32)
    a = ops.int8_matmul(aq, s, z, wq, s, None, None, None, "auto")
    b = ops.int8_matmul(aq, s, z, wq, s, F.int8_colsum(wq), None, None, "auto")
    assert torch.equal(a, b)


def test_int8_matmul_k_65536_extremes_exact():
    K = 65536
    aq = torch.full((2, K), -128, dtype=torch.int8)
    wq = torch.full((3, K), 127, dtype=torch.int8)
    wq[1] = -128
    s = torch.ones(1)
    z = torch.tensor([127, -128], dtype=torch.int32)
    want = ref.int8_matmul_ref(aq, s, z, wq, s)
    for colsum in (F.int8_colsum(wq), None):  # given, and computed by the op (row sums +-2^23)
        got = ops.int8_matmul(aq, s, z, wq, s, colsum, None, torch.float32, "auto")
        assert torch.equal(got.double(), want)  # every value here is exactly representable in fp32


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("M", [1, 3, 16, 20])
@pytest.mark.parametrize("K,bs", [(16, 16), (144, 64), (400, 128), (512, 256)])
def test_fp8_block_gemv_cpu(dtype, M, K, bs):
    N = 19
    x = _rand(M, K, seed=M + K, dtype=dtype)
    w = _rand(N, K, seed=K) * torch.logspace(-1, 1, K)  # scales vary along K
    wq, s = F.quantize_fp8_block(w, bs)
    bias = _rand(N, seed=3, dtype=dtype)
    for b in (None, bias):
        got = ops.fp8_block_gemv(x, wq, s, bs, b, "auto")
        assert got.dtype == dtype and got.shape == (M, N)
        wd = ref.dequantize_fp8_block_ref(wq, s, bs)
        want = ref.linear_ref(x, wd, b)
        assert ref.worst_fraction(got, want, ref.fp32_accum_bound(x, wd, b, dtype)) <= 1.0


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("M", [1, 5, 16, 17])
@pytest.mark.parametrize("K", [16, 48, 1040])
def test_nvfp4_gemv_cpu(dtype, M, K):
    N = 21
    x = _rand(M, K, seed=M * K, dtype=dtype)
    w = _rand(N, K, seed=K + 1) * torch.logspace(-2, 1, K)
    p, bs, g = F.quantize_nvfp4(w)
    bias = _rand(N, seed=5, dtype=dtype)
    for b in (None, bias):
        got = ops.nvfp4_gemv(x, p, bs, g, b, "auto")
        wd = ref.dequantize_nvfp4_ref(p, bs, g)
        want = ref.linear_ref(x, wd, b)
        assert ref.worst_fraction(got, want, ref.fp32_accum_bound(x, wd, b, dtype)) <= 1.0


def test_cpu_kernels_fast_enough():
    """M = 16, N = K = 4096 must take well under a second on 2 cores."""
    import time

    x = _rand(16, 4096, seed=1)
    w = _rand(4096, 4096, seed=2)
    aq, sa, _ = F.quantize_int8(x)
    wq, sw, _ = F.quantize_int8(w)
    fq, fs = F.quantize_fp8_block(w, 128)
    pk, bs, g = F.quantize_nvfp4(w)
    xh = x.to(torch.bfloat16)
    calls = {
        "int8_matmul": lambda: ops.int8_matmul(aq, sa, None, wq, sw, None, None, torch.bfloat16, "auto"),
        "fp8_block_gemv": lambda: ops.fp8_block_gemv(xh, fq, fs, 128, None, "auto"),
        "nvfp4_gemv": lambda: ops.nvfp4_gemv(xh, pk, bs, g, None, "auto"),
    }
    for name, fn in calls.items():
        fn()
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        assert dt < 0.5, f"{name} took {dt:.3f} s"


# -------------------------------------------------------------- bad input --
def _int8_args():
    aq = torch.randint(-128, 128, (4, 32), dtype=torch.int8)
    wq = torch.randint(-128, 128, (8, 32), dtype=torch.int8)
    return dict(a_q=aq, a_scale=torch.ones(4), a_zero=None, w_q=wq, w_scale=torch.ones(8))


def _call_int8(**kw):
    a = _int8_args()
    a.update(kw)
    return ops.int8_matmul(a["a_q"], a["a_scale"], a["a_zero"], a["w_q"], a["w_scale"],
                           kw.get("w_colsum"), kw.get("bias"), kw.get("out_dtype"), kw.get("kernel", "auto"))


@pytest.mark.parametrize(
    "kw,msg",
    [
        (dict(a_q=torch.zeros(4, 32)), "a_q must be Char"),
        (dict(w_q=torch.zeros(8, 16, dtype=torch.int8)), "K differ"),
        (dict(a_q=torch.zeros(0, 32, dtype=torch.int8), a_scale=torch.ones(1)), "empty"),
        (dict(a_scale=torch.ones(3)), "a_scale must hold one element or be 1-D of length 4"),
        (dict(w_scale=torch.ones(8, dtype=torch.float64)), "w_scale must be Float"),
        (dict(a_zero=torch.zeros(4)), "a_zero must be Int"),
        (dict(bias=torch.ones(7)), "bias must be 1-D of length N = 8"),
        (dict(out_dtype=torch.int32), "out_dtype"),
        (dict(kernel="fast"), "path 'fast' is not a CPU path"),
        (dict(a_q=torch.randint(-8, 8, (32, 4), dtype=torch.int8).t()), "contiguous"),
    ],
)
def test_int8_matmul_bad_inputs(kw, msg):
    with pytest.raises(RuntimeError, match=msg):
        _call_int8(**kw)


def test_int8_matmul_k_limit():
    aq = torch.zeros(1, 65536 + 16, dtype=torch.int8)
    with pytest.raises(RuntimeError, match="exceeds 65536"):
        ops.int8_matmul(aq, torch.ones(1), None, aq, torch.ones(1), None, None, None, "auto")


@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
def test_wrong_device_mix_raises():
    a = _int8_args()
    with pytest.raises(RuntimeError, match="is on"):
        ops.int8_matmul(a["a_q"].cuda(), a["a_scale"].cuda(), None, a["w_q"], a["w_scale"].cuda(), None, None, None, "auto")


def test_gemv_bad_inputs():
    x = _rand(2, 64, dtype=torch.float16)
    w = _rand(8, 64)
    fq, fs = F.quantize_fp8_block(w, 32)
    pk, bs, g = F.quantize_nvfp4(w)
    cases = [
        (lambda: ops.fp8_block_gemv(x.float(), fq, fs, 32, None, "auto"), "x must be float16 or bfloat16"),
        (lambda: ops.fp8_block_gemv(x, fq, fs, 24, None, "auto"), "block_size must be a multiple of 16"),
        (lambda: ops.fp8_block_gemv(x, fq, fs, 16, None, "auto"), "w_scale must be"),
        (lambda: ops.fp8_block_gemv(x[:, :40].contiguous(), fq[:, :40].contiguous(), fs, 32, None, "auto"), "multiple of 16"),
        (lambda: ops.fp8_block_gemv(x, fq, fs, 32, torch.ones(8), "auto"), "bias dtype"),
        (lambda: ops.fp8_block_gemv(x[:, ::2], fq[:, ::2], fs, 32, None, "auto"), "contiguous"),
        (lambda: ops.fp8_block_gemv(x[:0], fq, fs, 32, None, "auto"), "empty"),
        (lambda: ops.fp8_block_gemv(x, fq.view(torch.int8), fs, 32, None, "auto"), "w_q must be"),
        (lambda: ops.nvfp4_gemv(x, pk, bs, g, None, "mma"), "not a CPU path"),
        (lambda: ops.nvfp4_gemv(x, pk[:, :16].contiguous(), bs, g, None, "auto"), "w_packed must be"),
        (lambda: ops.nvfp4_gemv(x, pk, bs.float(), g, None, "auto"), "w_scale must be"),
        (lambda: ops.nvfp4_gemv(x, pk, bs, torch.ones(2), None, "auto"), "global_scale must hold one element"),
        (lambda: ops.quantize_nvfp4(_rand(4, 40)), "multiple of 16"),
        (lambda: ops.quantize_fp8_block(_rand(4, 40).t(), 16), "contiguous"),
        (lambda: ops.prune24(_rand(4, 10)), "multiple of 4"),
        (lambda: ops.decompress24(torch.zeros(2, 4), torch.zeros(2, 2, dtype=torch.uint8)), "meta must be"),
    ]
    for fn, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            fn()


def _none_cases():
    """(op name, valid arguments, indices of required tensor arguments) for every op with two
    or more tensor operands (a single-tensor op given None fails in the dispatcher, before it)."""
    x16 = _rand(3, 64, dtype=torch.bfloat16)
    w = _rand(8, 64)
    fq, fs = ops.quantize_fp8_block(w, 32)
    pk, bs, g = ops.quantize_nvfp4(w)
    aq, asc, az = ops.quantize_int8(_rand(3, 64), True, False)
    wq, wsc, _ = ops.quantize_int8(w, True, True)
    colsum = F.int8_colsum(wq)
    w24 = ops.prune24(w)[0]
    v16, m16 = ops.compress24(w24.to(torch.bfloat16))
    wq24 = ops.quantize_int8(w24, True, True)[0]
    v8, m8 = ops.compress24(wq24)
    return [
        ("int8_matmul", [aq, asc, az, wq, wsc, colsum, None, None, "auto"], [0, 1, 3, 4]),
        ("sparse24_int8_matmul", [aq, asc, az, v8, m8, wsc, colsum, None, None, "auto"], [0, 1, 3, 4, 5]),
        ("fp8_block_gemv", [x16, fq, fs, 32, None, "auto"], [0, 1, 2]),
        ("dequantize_fp8_block", [fq, fs, 32, None], [0, 1]),
        ("nvfp4_gemv", [x16, pk, bs, g, None, "auto", 0], [0, 1, 2, 3]),
        ("dequantize_nvfp4", [pk, bs, g, None], [0, 1, 2]),
        ("decompress24", [v16, m16], [0, 1]),
        ("sparse24_gemv", [x16, v16, m16, None, "auto"], [0, 1, 2]),
    ]


@pytest.mark.parametrize("case", _none_cases(), ids=lambda c: c[0])
def test_required_tensor_given_none_raises_clearly(case):
    name, args, required = case
    op = getattr(ops, name)
    op(*args)  # the arguments are valid as they are
    for i in required:
        bad = list(args)
        bad[i] = None
        with pytest.raises(RuntimeError, match=f"{name}: .* must be a tensor, got None"):
            op(*bad)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_quantize_ops_reject_nonfinite_on_cpu(bad):
    w = _rand(4, 32)
    w[2, 7] = bad
    for fn in (lambda: ops.quantize_int8(w, True, True), lambda: ops.quantize_fp8_block(w, 16),
               lambda: ops.quantize_nvfp4(w), lambda: ops.prune24(w)):
        with pytest.raises(RuntimeError, match="NaN or Inf"):
            fn()


def test_underflowing_scales_match_formats_on_cpu():
    tiny = torch.full((2, 32), 1e-44)
    for got, want in ((ops.quantize_int8(tiny, True, True), F.quantize_int8(tiny)),
                      (ops.quantize_fp8_block(tiny, 16), F.quantize_fp8_block(tiny, 16)),
                      (ops.quantize_nvfp4(tiny), F.quantize_nvfp4(tiny))):
        for g_, w_ in zip(got, want):
            g_, w_ = (g_.view(torch.uint8), w_.view(torch.uint8)) if g_.dtype == torch.float8_e4m3fn else (g_, w_)
            assert torch.equal(g_, w_)


def test_decompress24_rejects_bad_nibble():
    v = torch.ones(1, 4)
    meta = torch.tensor([[0x05]], dtype=torch.uint8)  # p0 = 1, p1 = 1
    with pytest.raises(RuntimeError):
        ops.decompress24(v, meta)


# ------------------------------------------- fakes check what the C++ checks --
# The fake kernels (torchquant/ops.py) serve torch.compile, export, meta-device tracing and
# FakeTensorMode; each bad call below raises on CPU and must raise the same message on meta.
def _meta(v):
    """v on the meta device with its strides (Tensor.to("meta") would make a view dense)."""
    if isinstance(v, torch.Tensor):
        return torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="meta")
    return v


def _fake_args():
    """Valid arguments of every public op (M = 5, N = 24, K = 64), by op name."""
    x = _rand(5, 64, seed=1)
    w = _rand(24, 64, seed=2)
    aq, sa, za = F.quantize_int8(x, True, False)
    wq, sw, _ = F.quantize_int8(w, True, True)
    fq, fs = F.quantize_fp8_block(w, 32)
    pk, bs, g = F.quantize_nvfp4(w)
    xh = x.to(torch.float16)
    hv, hm = F.compress24(F.prune24(w.half())[0])
    iv, im = F.compress24(F.prune24(wq)[0])
    b32 = _rand(24, seed=3)
    return {
        "int8_matmul": [aq, sa, za, wq, sw, F.int8_colsum(wq), b32, torch.float16, "auto"],
        "quantize_int8": [x, True, False],
        "fp8_block_gemv": [xh, fq, fs, 32, b32.half(), "auto", False, False],
        "fp8_block_tile": [*F.quantize_fp8_block(_rand(32, 128, seed=6), 64), False],
        "quantize_fp8_block": [w, 32],
        "quantize_fp8_act": [xh, 32],
        "dequantize_fp8_block": [fq, fs, 32, torch.bfloat16],
        "nvfp4_gemv": [xh, pk, bs, g, b32.half(), "auto", 0, False],
        "nvfp4_relayout": [pk, 1, False],
        "nvfp4_relayout_scale": [bs, 0, False],
        "quantize_nvfp4": [w],
        "dequantize_nvfp4": [pk, bs, g, None],
        "prune24": [w],
        "compress24": [F.prune24(w)[0]],
        "decompress24": [hv, hm],
        "sparse24_gemv": [xh, hv, hm, b32.half(), "auto"],
        "sparse24_int8_matmul": [aq, sa, za, iv, im, sw, F.int8_colsum(F.decompress24(iv, im)), b32, None, "auto"],
    }


def _strided(t):
    """t's values in a non-contiguous view (every other column of a wider tensor)."""
    return torch.stack([t, t], -1).flatten(-2)[..., ::2]


def _bcast(t):
    """A stride-0 view of t's shape (one element broadcast)."""
    return t.reshape(-1)[:1].expand(t.shape)


def _zeros(shape, dtype):
    return torch.zeros(shape).to(dtype)


# (id, op, {argument index: replacement or function of the valid value}, message fragment)
_I8, _S8 = torch.int8, "sparse24_int8_matmul"
_BAD_FAKE_CASES = [
    # int8_matmul: a_q [5, 64], a_scale [5], a_zero [5], w_q [24, 64], w_scale [24], w_colsum [24], bias [24]
    ("i8-a_scale-len", "int8_matmul", {1: lambda t: t[:3]}, "a_scale must hold one element or be 1-D of length 5"),
    ("i8-a_scale-2d", "int8_matmul", {1: lambda t: t[:, None]}, "a_scale must hold one element"),
    ("i8-a_zero-len", "int8_matmul", {2: lambda t: t[:2]}, "a_zero must hold one element"),
    ("i8-a_zero-dtype", "int8_matmul", {2: lambda t: t.float()}, "a_zero must be Int"),
    ("i8-w_scale-len", "int8_matmul", {4: lambda t: t[:5]}, "w_scale must hold one element or be 1-D of length 24"),
    ("i8-a_q-strided", "int8_matmul", {0: _strided}, r"a_q must be contiguous \(call .contiguous\(\) first\)"),
    ("i8-w_q-transposed", "int8_matmul", {3: lambda t: t.t().contiguous().t()}, "w_q must be contiguous"),
    ("i8-a_scale-stride0", "int8_matmul", {1: _bcast}, "a_scale must be contiguous"),
    ("i8-a_zero-stride0", "int8_matmul", {2: _bcast}, "a_zero must be contiguous"),
    ("i8-w_scale-stride0", "int8_matmul", {4: _bcast}, "w_scale must be contiguous"),
    ("i8-w_colsum-stride0", "int8_matmul", {5: _bcast}, "w_colsum must be contiguous"),
    ("i8-bias-stride0", "int8_matmul", {6: _bcast}, "bias must be contiguous"),
    ("i8-empty-M", "int8_matmul", {0: lambda t: t[:0]}, r"empty operand \(M = 0, N = 24, K = 64\)"),
    ("i8-empty-N", "int8_matmul", {3: lambda t: t[:0], 4: lambda t: t[:0]}, r"empty operand \(M = 5, N = 0"),
    ("i8-empty-K", "int8_matmul", {0: lambda t: t[:, :0], 3: lambda t: t[:, :0]}, r"empty operand .*K = 0\)"),
    ("i8-K-differ", "int8_matmul", {3: lambda t: t[:, :32].contiguous()}, "their K differ"),
    ("i8-K-limit", "int8_matmul", {0: lambda t: _zeros((5, 65552), _I8), 3: lambda t: _zeros((24, 65552), _I8)},
     "exceeds 65536"),
    ("i8-bias-int", "int8_matmul", {6: lambda t: t.int()}, "bias must be float32, float16 or bfloat16, got Int"),
    ("i8-bias-len", "int8_matmul", {6: lambda t: t[:7]}, "bias must be 1-D of length N = 24"),
    ("i8-w_colsum-dtype", "int8_matmul", {5: lambda t: t.float()}, "w_colsum must be Int"),
    ("i8-w_colsum-shape", "int8_matmul", {5: lambda t: t[:, None]}, "w_colsum must be 1-D of length N = 24"),
    ("i8-out_dtype", "int8_matmul", {7: torch.int32}, "out_dtype must be float32, float16 or bfloat16, got Int"),
    ("i8-path-empty", "int8_matmul", {8: ""}, "path '' is not a CPU path; valid here: 'auto' 'cpu'"),
    ("i8-path-AUTO", "int8_matmul", {8: "AUTO"}, "path 'AUTO' is not a CPU path"),
    ("i8-path-gemv", "int8_matmul", {8: "gemv"}, "path 'gemv' is not a CPU path"),
    ("i8-a_q-dtype", "int8_matmul", {0: lambda t: t.float()}, "a_q must be Char, got Float"),
    ("i8-w_q-3d", "int8_matmul", {3: lambda t: t[None]}, "w_q must be 2-D"),
    # quantize_int8: x [5, 64]
    ("qi8-empty", "quantize_int8", {0: lambda t: t[:0]}, "x must be non-empty"),
    ("qi8-strided", "quantize_int8", {0: _strided}, "x must be contiguous"),
    ("qi8-dtype", "quantize_int8", {0: lambda t: t.double()}, "x must be float32, float16 or bfloat16, got Double"),
    # fp8_block_gemv: x [5, 64] fp16, w_q [24, 64], w_scale [24, 2] (block 32), bias [24] fp16
    ("fp8-w_scale-shape", "fp8_block_gemv", {2: lambda t: t[:, :1].contiguous()},
     r"w_scale must be \[N, ceil\(K / 32\)\] = \[24, 2\]"),
    ("fp8-w_scale-block", "fp8_block_gemv", {3: 16}, r"w_scale must be \[N, ceil\(K / 16\)\] = \[24, 4\]"),
    ("fp8-x-strided", "fp8_block_gemv", {0: _strided}, "x must be contiguous"),
    ("fp8-w_scale-stride0", "fp8_block_gemv", {2: _bcast}, "w_scale must be contiguous"),
    ("fp8-bias-stride0", "fp8_block_gemv", {4: _bcast}, "bias must be contiguous"),
    ("fp8-empty-M", "fp8_block_gemv", {0: lambda t: t[:0]}, "empty operand"),
    ("fp8-block_size", "fp8_block_gemv", {3: 24}, r"block_size must be a multiple of 16 in \[16, 256\], got 24"),
    ("fp8-block_size-big", "fp8_block_gemv", {3: 512}, "block_size must be a multiple of 16"),
    ("fp8-bias-dtype", "fp8_block_gemv", {4: lambda t: t.float()}, "bias dtype Float must match x dtype Half"),
    ("fp8-bias-int", "fp8_block_gemv", {4: lambda t: t.int()}, "bias must be float32, float16 or bfloat16"),
    ("fp8-path-tile", "fp8_block_gemv", {5: "tile"}, "path 'tile' is not a CPU path"),
    ("fp8-tiled-N24", "fp8_block_gemv", {7: True},
     "the tiled fp8 weight needs N % 16 == 0 and K % 64 == 0 .whole 16-row tiles of 64-byte pieces., got N = 24, K = 64"),
    # fp8_block_tile: w_q [32, 128] e4m3, w_scale [32, 2]
    ("tile-N24", "fp8_block_tile", {0: lambda t: t[:24], 1: lambda t: t[:24]},
     "fp8_block_tile: the tiled fp8 weight needs N % 16 == 0 and K % 64 == 0 .* got N = 24, K = 128"),
    ("tile-K96", "fp8_block_tile", {0: lambda t: t[:, :96].contiguous()}, "got N = 32, K = 96"),
    ("tile-scale-rows", "fp8_block_tile", {1: lambda t: t[:16]},
     r"w_scale must be \[N, nb\] with N = 32 and nb >= 1 .quantize_fp8_block's scales., got \[16, 2\]"),
    ("tile-scale-empty", "fp8_block_tile", {1: lambda t: t[:, :0]}, r"w_scale must be \[N, nb\]"),
    ("tile-empty", "fp8_block_tile", {0: lambda t: t[:0], 1: lambda t: t[:0]}, r"w_q must be non-empty, got shape \[0, 128\]"),
    ("tile-w_q-dtype", "fp8_block_tile", {0: lambda t: t.view(torch.uint8)}, "w_q must be Float8_e4m3fn, got Byte"),
    ("tile-w_scale-dtype", "fp8_block_tile", {1: lambda t: t.double()}, "w_scale must be Float, got Double"),
    ("tile-w_q-strided", "fp8_block_tile", {0: lambda t: _strided(t.view(torch.uint8)).view(torch.float8_e4m3fn)},
     "w_q must be contiguous"),
    ("tile-w_scale-stride0", "fp8_block_tile", {1: _bcast}, "w_scale must be contiguous"),
    ("tile-dim", "fp8_block_tile", {1: lambda t: t.reshape(-1)}, "w_scale must be 2-D"),
    ("fp8-K16", "fp8_block_gemv", {0: lambda t: t[:, :40].contiguous(), 1: lambda t: t[:, :40].contiguous()},
     "K must be a multiple of 16, got 40"),
    ("fp8-x-fp32", "fp8_block_gemv", {0: lambda t: t.float()}, "x must be float16 or bfloat16, got Float"),
    # quantize_fp8_block / quantize_fp8_act / dequantize_fp8_block
    ("qfp8-empty", "quantize_fp8_block", {0: lambda t: t[:, :0]}, "w must be non-empty"),
    ("qfp8-strided", "quantize_fp8_block", {0: _strided}, "w must be contiguous"),
    ("qfp8-block", "quantize_fp8_block", {1: 8}, "block_size must be a multiple of 16"),
    ("qfp8-dtype", "quantize_fp8_block", {0: lambda t: t.int()}, "w must be float32, float16 or bfloat16"),
    ("qact-K0", "quantize_fp8_act", {0: lambda t: t[:, :0]}, "x must have K > 0"),
    ("qact-strided", "quantize_fp8_act", {0: _strided}, "x must be contiguous"),
    ("qact-block", "quantize_fp8_act", {1: 0}, "block_size must be a multiple of 16"),
    ("dqfp8-scale-shape", "dequantize_fp8_block", {1: lambda t: t[:20].contiguous()},
     r"scale must be \[N, ceil\(K / 32\)\] = \[24, 2\], got \[20, 2\]"),
    ("dqfp8-scale-block", "dequantize_fp8_block", {2: 64}, r"scale must be \[N, ceil\(K / 64\)\] = \[24, 1\]"),
    ("dqfp8-out_dtype", "dequantize_fp8_block", {3: torch.int8}, "out_dtype must be float32, float16 or bfloat16"),
    ("dqfp8-out_dtype64", "dequantize_fp8_block", {3: torch.float64}, "got Double"),
    ("dqfp8-empty", "dequantize_fp8_block", {0: lambda t: t[:0], 1: lambda t: t[:0]}, "w_q must be non-empty"),
    ("dqfp8-scale-stride0", "dequantize_fp8_block", {1: _bcast}, "scale must be contiguous"),
    ("dqfp8-w_q-strided", "dequantize_fp8_block", {0: _strided}, "w_q must be contiguous"),
    # nvfp4_gemv: x [5, 64] fp16, w_packed [24, 32], w_scale [24, 4], global_scale [], bias [24] fp16
    ("nv-w_scale-shape", "nvfp4_gemv", {2: lambda t: t[:, :2].contiguous()}, r"w_scale must be \[N, K/16\] = \[24, 4\]"),
    ("nv-global-2", "nvfp4_gemv", {3: lambda t: t.reshape(1).repeat(2)}, "global_scale must hold one element"),
    ("nv-global-dtype", "nvfp4_gemv", {3: lambda t: t.half()}, "global_scale must be Float, got Half"),
    ("nv-w_packed-shape", "nvfp4_gemv", {1: lambda t: t[:, :16].contiguous()}, r"so w_packed must be \[N, K/2\]"),
    ("nv-w_packed-strided", "nvfp4_gemv", {1: _strided}, "w_packed must be contiguous"),
    ("nv-w_scale-stride0", "nvfp4_gemv", {2: _bcast}, "w_scale must be contiguous"),
    ("nv-bias-stride0", "nvfp4_gemv", {4: _bcast}, "bias must be contiguous"),
    ("nv-empty-N", "nvfp4_gemv", {1: lambda t: t[:0], 2: lambda t: t[:0]}, r"empty operand \(M = 5, N = 0"),
    ("nv-path-mma", "nvfp4_gemv", {5: "mma"}, "path 'mma' is not a CPU path"),
    ("nv-layout-5", "nvfp4_gemv", {6: 5}, "layout must be 0"),
    ("nv-layout-4-fp16", "nvfp4_gemv", {6: 4}, "layout 4 is the bf16 decode order and needs bfloat16 x, got Half"),
    ("nv-layout-4-N24", "nvfp4_gemv", {0: lambda t: t.bfloat16(), 4: lambda t: t.bfloat16(), 6: 4},
     "layout 4 .tiles of 16 rows x 128 codes. needs N % 16 == 0 and K % 128 == 0, got N = 24, K = 64"),
    ("nv-layout-1-fp16", "nvfp4_gemv", {6: 1}, "layout 1 is the bf16 decode order and needs bfloat16 x, got Half"),
    ("nv-bias-dtype", "nvfp4_gemv", {4: lambda t: t.bfloat16()}, "bias dtype BFloat16 must match x dtype Half"),
    ("relayout-layout", "nvfp4_relayout", {1: 5}, "layout must be 0"),
    ("relayout-tiled-N24", "nvfp4_relayout", {1: 4}, "needs N % 16 == 0 and K % 128 == 0, got N = 24, K = 64"),
    # nvfp4_relayout_scale: w_scale [24, 4] e4m3
    ("rlscale-layout", "nvfp4_relayout_scale", {1: 5}, "layout must be 0"),
    ("rlscale-tiled-N24", "nvfp4_relayout_scale", {1: 4}, "needs N % 16 == 0 and K % 128 == 0, got N = 24, K = 64"),
    ("rlscale-strided", "nvfp4_relayout_scale", {0: _strided}, "w_scale must be contiguous"),
    ("rlscale-dtype", "nvfp4_relayout_scale", {0: lambda t: t.view(torch.uint8)}, "w_scale must be Float8_e4m3fn"),
    ("rlscale-dim", "nvfp4_relayout_scale", {0: lambda t: t.reshape(-1)}, "w_scale must be 2-D"),
    ("relayout-strided", "nvfp4_relayout", {0: _strided}, "w_packed must be contiguous"),
    ("relayout-K16", "nvfp4_relayout", {0: lambda t: t[:, :4].contiguous()}, "must be a multiple of 16, got 8"),
    ("qnv-K16", "quantize_nvfp4", {0: lambda t: t[:, :40].contiguous()}, "must be a multiple of 16, got 40"),
    ("qnv-empty", "quantize_nvfp4", {0: lambda t: t[:0]}, "w must be non-empty"),
    ("qnv-stride0", "quantize_nvfp4", {0: _bcast}, "w must be contiguous"),
    # dequantize_nvfp4: w_packed [24, 32], scale [24, 4], global_scale []
    ("dqnv-K16", "dequantize_nvfp4", {0: lambda t: t[:, :4].contiguous(), 1: lambda t: t[:, :1].contiguous()},
     "K = 2 [*] w_packed.size.1. must be a multiple of 16, got 8"),
    ("dqnv-scale-shape", "dequantize_nvfp4", {1: lambda t: t[:, :3].contiguous()}, r"scale must be \[N, K/16\]"),
    ("dqnv-global-2", "dequantize_nvfp4", {2: lambda t: t.reshape(1).repeat(2)}, "global_scale must hold one"),
    ("dqnv-global-dtype", "dequantize_nvfp4", {2: lambda t: t.double()}, "global_scale must be Float"),
    ("dqnv-out_dtype", "dequantize_nvfp4", {3: torch.int32}, "out_dtype must be float32, float16 or bfloat16"),
    ("dqnv-empty", "dequantize_nvfp4", {0: lambda t: t[:0], 1: lambda t: t[:0]}, "w_packed must be non-empty"),
    ("dqnv-scale-strided", "dequantize_nvfp4", {1: _strided}, "scale must be contiguous"),
    # 2:4 formats
    ("prune-strided", "prune24", {0: _strided}, "w must be contiguous"),
    ("prune-empty", "prune24", {0: lambda t: t[:0]}, "w must be non-empty"),
    ("prune-K4", "prune24", {0: lambda t: t[:, :10].contiguous()}, "must be a multiple of 4, got 10"),
    ("prune-dtype", "prune24", {0: lambda t: t.double()}, "w must be int8, float16, bfloat16 or float32"),
    ("compress-stride0", "compress24", {0: _bcast}, "w must be contiguous"),
    ("compress-empty", "compress24", {0: lambda t: t[:, :0]}, "w must be non-empty"),
    ("decomp-meta-shape", "decompress24", {1: lambda t: t[:, :3].contiguous()}, r"meta must be \[N, ceil\(K/8\)\]"),
    ("decomp-values-strided", "decompress24", {0: _strided}, "values must be contiguous"),
    ("decomp-meta-stride0", "decompress24", {1: _bcast}, "meta must be contiguous"),
    ("decomp-empty", "decompress24", {0: lambda t: t[:0], 1: lambda t: t[:0]}, "values must be non-empty"),
    ("decomp-meta-dtype", "decompress24", {1: lambda t: t.to(torch.int8)}, "meta must be Byte"),
    # sparse24_gemv: x [5, 64] fp16, values [24, 32], meta [24, 8], bias [24] fp16
    ("sp-values-dtype", "sparse24_gemv", {1: lambda t: t.bfloat16()}, "values dtype BFloat16 must match x dtype Half"),
    ("sp-meta-shape", "sparse24_gemv", {2: lambda t: t[:, :4].contiguous()}, r"meta must be \[N, ceil\(K/8\)\]"),
    ("sp-x-strided", "sparse24_gemv", {0: _strided}, "x must be contiguous"),
    ("sp-meta-stride0", "sparse24_gemv", {2: _bcast}, "meta must be contiguous"),
    ("sp-bias-stride0", "sparse24_gemv", {3: _bcast}, "bias must be contiguous"),
    ("sp-bias-dtype", "sparse24_gemv", {3: lambda t: t.float()}, "bias dtype Float must match x dtype Half"),
    ("sp-empty-M", "sparse24_gemv", {0: lambda t: t[:0]}, "empty operand"),
    ("sp-path-fma", "sparse24_gemv", {4: "fma"}, "path 'fma' is not a CPU path"),
    ("sp-K4", "sparse24_gemv", {0: lambda t: t[:, :62].contiguous()}, "K must be a multiple of 4"),
    # sparse24_int8_matmul: a_q [5, 64], a_scale, a_zero, w_values [24, 32], w_meta [24, 8], w_scale, w_colsum, bias
    ("s8-a_scale-len", _S8, {1: lambda t: t[:3]}, "a_scale must hold one element or be 1-D of length 5"),
    ("s8-a_zero-2d", _S8, {2: lambda t: t[None]}, "a_zero must hold one element"),
    ("s8-a_q-strided", _S8, {0: _strided}, "a_q must be contiguous"),
    ("s8-w_values-strided", _S8, {3: _strided}, "w_values must be contiguous"),
    ("s8-w_meta-stride0", _S8, {4: _bcast}, "w_meta must be contiguous"),
    ("s8-w_scale-stride0", _S8, {5: _bcast}, "w_scale must be contiguous"),
    ("s8-w_colsum-len", _S8, {6: lambda t: t[:3]}, "w_colsum must be 1-D of length N = 24"),
    ("s8-empty-K", _S8, {0: lambda t: t[:, :0]}, "empty operand"),
    ("s8-K4", _S8, {0: lambda t: t[:, :62].contiguous()}, "K must be a multiple of 4"),
    ("s8-bias-int", _S8, {7: lambda t: t.long()}, "bias must be float32, float16 or bfloat16, got Long"),
    ("s8-out_dtype", _S8, {8: torch.int8}, "out_dtype must be"),
    ("s8-path-simt", _S8, {9: "simt"}, "path 'simt' is not a CPU path"),
    ("s8-w_meta-shape", _S8, {4: lambda t: t[:, :7].contiguous()}, r"w_meta must be \[N, ceil\(K/8\)\]"),
]


def _bad_fake_args(name, repl):
    args = _fake_args()[name]
    for i, r in repl.items():
        args[i] = r(args[i]) if callable(r) else r
    return args


@pytest.mark.parametrize("case", _BAD_FAKE_CASES, ids=lambda c: c[0])
def test_fake_raises_what_cpu_raises(case):
    _, name, repl, msg = case
    op = getattr(ops, name)
    args = _bad_fake_args(name, repl)
    with pytest.raises(RuntimeError, match=msg) as cpu:
        op(*args)
    margs = [_meta(a) for a in args]
    if "-path-" in case[0]:
        # meta takes either backend's names: a CUDA path passes there, others are refused
        # with both backends' names listed
        p = repl[max(repl)]
        if p in _CUDA_PATHS.get(name, ()):
            assert op(*margs).device.type == "meta"
        else:
            shown = re.escape(p.replace("\0", "\\0"))
            with pytest.raises(RuntimeError, match=f"path '{shown}' is not a CPU or CUDA path; valid here: 'auto' 'cpu'"):
                op(*margs)
        return
    with pytest.raises(RuntimeError, match=msg) as meta:
        op(*margs)
    # the same words (the C++ validators' message, first line: no C++ context lines)
    assert str(meta.value).splitlines()[0] == str(cpu.value).splitlines()[0]



def test_fake_case_list_covers_every_public_op():
    assert {c[1] for c in _BAD_FAKE_CASES} == set(_fake_args())


def _good_fake_cases():
    a = _fake_args()
    x = a["quantize_int8"][0]
    aq, sa, za, wq, sw = a["int8_matmul"][:5]
    xb = a["fp8_block_gemv"][0].bfloat16()
    pk, bs, g = a["nvfp4_gemv"][1:4]
    cases = [(name, args) for name, args in a.items()]
    cases += [
        ("int8_matmul", [aq, sa[:1], None, wq, sw[:1, None], None, None, None, "cpu"]),  # one-element scales
        ("int8_matmul", [aq, sa[:1].reshape(()), za[:1], wq, sw, None, None, torch.bfloat16, "auto"]),
        ("quantize_int8", [x, False, True]),
        ("quantize_fp8_act", [x[:0], 32]),  # M = 0 is allowed here
        ("quantize_fp8_block", [x.half(), 48]),  # K = 64 over blocks of 48: nb = 2
        ("nvfp4_gemv", [xb, F.relayout_nvfp4(pk, 1), bs, g, None, "cpu", 1, True]),
        ("dequantize_nvfp4", [pk, bs, g, torch.float16]),
        ("dequantize_fp8_block", [*a["dequantize_fp8_block"][:3], None]),
        ("nvfp4_relayout", [pk, 0, True]),
        ("nvfp4_relayout", [torch.randint(0, 256, (32, 128), dtype=torch.uint8), 4, False]),
        ("nvfp4_relayout_scale", [F.quantize_nvfp4(_rand(32, 256, seed=9))[1], 4, True]),
        ("fp8_block_tile", [*a["fp8_block_tile"][:2], True]),
        ("fp8_block_gemv", [_rand(3, 128, seed=7).bfloat16(), *a["fp8_block_tile"][:2], 64, None, "auto", False, True]),
        ("nvfp4_gemv", [_rand(3, 256, seed=8).bfloat16(), *F.quantize_nvfp4(_rand(32, 256, seed=9)), None, "auto", 4, False]),
    ]
    return cases


@pytest.mark.parametrize("case", _good_fake_cases(), ids=lambda c: c[0])
def test_fake_output_metadata_matches_cpu(case):
    name, args = case
    op = getattr(ops, name)
    got = op(*[_meta(a) for a in args])
    want = op(*args)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    for g_, w_ in zip(got, want):
        assert g_.device.type == "meta"
        assert (g_.shape, g_.dtype, g_.stride()) == (w_.shape, w_.dtype, w_.stride())


@pytest.mark.parametrize("name", [n for n, a in _fake_args().items() if sum(isinstance(v, torch.Tensor) for v in a) > 1])
def test_fake_rejects_mixed_devices(name):
    """Before, a CPU call with one meta operand reached the fake and returned an unfilled CPU tensor."""
    op = getattr(ops, name)
    args = _fake_args()[name]
    for i, v in enumerate(args):
        if not isinstance(v, torch.Tensor):
            continue
        one_meta = list(args)
        one_meta[i] = _meta(v)
        one_cpu = [_meta(a) for a in args]
        one_cpu[i] = v
        for bad in (one_meta, one_cpu):
            with pytest.raises(RuntimeError, match=rf"{name}: \w+ is on (meta|cpu) but the other operands are on"):
                op(*bad)


def test_fake_mixed_devices_regression():
    a = _int8_args()
    with pytest.raises(RuntimeError, match="int8_matmul: w_q is on meta but the other operands are on cpu"):
        ops.int8_matmul(a["a_q"], a["a_scale"], None, a["w_q"].to("meta"), a["w_scale"], None, None, None, "auto")


def _cuda_fakes(args, device="cuda"):
    """args as FakeTensors on `device` (one, or one per argument; call inside the FakeTensorMode):
    no GPU needed."""
    devices = [device] * len(args) if isinstance(device, str) else device
    return [torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device=d) if isinstance(v, torch.Tensor) else v
            for v, d in zip(args, devices)]


def test_fake_paths_follow_the_device_type():
    """Under FakeTensorMode tensors keep their device: CUDA fakes take the CUDA path names (and
    refuse 'cpu'), CPU fakes the CPU's; and the CUDA code's shape conditions of a named path."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    real = _fake_args()
    cuda_paths = {"int8_matmul": ("gemv", "mma", "wgmma"), "fp8_block_gemv": ("fma", "mma", "tile"),
                  "nvfp4_gemv": ("fma", "mma"), "sparse24_gemv": ("fma", "mma"),
                  "sparse24_int8_matmul": ("simt", "gemv", "mma")}
    path_index = {"int8_matmul": 8, "fp8_block_gemv": 5, "nvfp4_gemv": 5, "sparse24_gemv": 4,
                  "sparse24_int8_matmul": 9}
    # what the CUDA code refuses whatever the GPU, for a named path (K = 64 here)
    bad = [
        ("fp8_block_gemv", {3: 64, 2: lambda t: t[:, :1], 5: "wgmma"}, "path 'wgmma' needs K % 128 == 0"),
        ("fp8_block_gemv", {3: 16, 2: lambda t: t.repeat(1, 2), 5: "wgmma"}, "needs block_size % 64 == 0"),
        ("fp8_block_gemv", {3: 16, 2: lambda t: t.repeat(1, 2), 5: "direct"},
         "path 'direct' needs block_size % 64 == 0 and K % 64 == 0"),
        ("nvfp4_gemv", {5: "wgmma"}, "path 'wgmma' needs K % 256 == 0"),
        ("nvfp4_gemv", {5: "tile"}, "kernel 'tile' needs K % 128 == 0"),
        ("sparse24_gemv", {4: "wgmma"}, "path 'wgmma' needs K % 128 == 0"),
        ("sparse24_int8_matmul", {9: "wgmma"}, "path 'wgmma' needs K % 128 == 0"),
        ("sparse24_gemv", {0: lambda t: t[:, :48], 1: lambda t: t[:, :24], 2: lambda t: t[:, :6], 4: "mma"},
         "kernel 'mma' needs K % 32 == 0"),
        ("sparse24_int8_matmul", {0: lambda t: t[:, :48], 3: lambda t: t[:, :24], 4: lambda t: t[:, :6], 6: None,
                                  9: "gemv"}, "kernel 'gemv' needs K % 32 == 0"),
        ("int8_matmul", {0: lambda t: t[:, :40], 3: lambda t: t[:, :40], 5: None, 8: "wgmma"},
         "kernel 'wgmma' needs K % 16 == 0"),
    ]
    for k, (name, repl, msg) in enumerate(bad):
        args = list(real[name])
        for i, r in repl.items():
            args[i] = r(args[i]).contiguous() if callable(r) else r
        bad[k] = (name, args, msg)
    xb, pk, bs, g = real["nvfp4_gemv"][0].bfloat16(), *real["nvfp4_gemv"][1:4]
    pk1 = F.relayout_nvfp4(pk, 1)
    fp8_direct = list(real["fp8_block_gemv"])
    fp8_direct[2], fp8_direct[3], fp8_direct[5] = fp8_direct[2][:, :1].contiguous(), 64, "direct"
    with FakeTensorMode():
        for name, paths in cuda_paths.items():
            op, i = getattr(ops, name), path_index[name]
            args = _cuda_fakes(real[name])
            for p in ("auto",) + paths:
                args[i] = p
                assert op(*args).device.type == "cuda", (name, p)
            for p in ("cpu", "", "AUTO", "dp4a"):
                args[i] = p
                with pytest.raises(RuntimeError, match=f"{name}: path '{p}' is not a CUDA path; valid here: 'auto'"):
                    op(*args)
            cpu_args = _cuda_fakes(real[name], "cpu")
            for p in paths:
                cpu_args[i] = p
                with pytest.raises(RuntimeError, match=f"path '{p}' is not a CPU path"):
                    op(*cpu_args)
        # what the CUDA code refuses whatever the GPU, for a named path
        for name, args, msg in bad:
            with pytest.raises(RuntimeError, match=msg):
                getattr(ops, name)(*_cuda_fakes(args))
        # fp8 'direct' at block_size 64 (K = 64): the path's shape conditions hold
        assert ops.fp8_block_gemv(*_cuda_fakes(fp8_direct)).device.type == "cuda"
        # layouts 1 / 2 run on paths auto, mma and wgmma only
        args = _cuda_fakes([xb, pk1, bs, g, None, "mma", 1, False])
        assert ops.nvfp4_gemv(*args).shape == (5, 24)
        args[5] = "fma"
        with pytest.raises(RuntimeError, match="layout 1 .a decode order. runs on paths 'mma' and 'wgmma'"):
            ops.nvfp4_gemv(*args)
        # one device exactly, as the C++ checks it: no exception for a one-element CPU tensor
        args = _cuda_fakes(real["nvfp4_gemv"])
        args[3] = _cuda_fakes([real["nvfp4_gemv"][3]], "cpu")[0]
        with pytest.raises(RuntimeError, match="nvfp4_gemv: global_scale is on cpu but the other operands are on cuda"):
            ops.nvfp4_gemv(*args)


def test_sm90a_fakes():
    """The private sm_90a ops' fakes (registered by _register_sm90a_fakes where torchquant._C_sm90a
    is loaded), called directly: CUDA tensors only, the public op's checks, their K multiples."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torchquant.ops import _SM90A_FAKES as fakes

    w = _rand(24, 256, seed=2)
    x = _rand(5, 256, seed=1)
    aq, sa, za = F.quantize_int8(x, True, False)
    wq, sw, _ = F.quantize_int8(w, True, True)
    iv, im = F.compress24(F.prune24(wq)[0])
    hv, hm = F.compress24(F.prune24(w.half())[0])
    fq, fs = F.quantize_fp8_block(w, 128)
    pk, bs, g = F.quantize_nvfp4(w)
    xh = x.half()
    cases = {
        "_int8_gemm_sm90a": ([aq, sa, za, wq, sw, None, None, None], torch.float32),
        "_sparse24_int8_gemm_sm90a": ([aq, sa, za, iv, im, sw, None, None, torch.float16], torch.float16),
        "_sparse24_gemm_sm90a": ([xh, hv, hm, None], torch.float16),
        "_fp8_block_gemm_sm90a": ([xh, fq, fs, 128, None], torch.float16),
        "_nvfp4_gemm_sm90a": ([xh, pk, bs, g, None, 0], torch.float16),
        "_fp8_block_gemv_sm90a": ([xh, fq, fs, 128, None, True], torch.float16),
        "_nvfp4_gemv_sm90a": ([xh, pk, bs, g, None, 0, False], torch.float16),
    }
    assert set(cases) == set(fakes)
    k40 = [t[:, :40].contiguous() for t in (aq, wq)]
    k32 = [t[:, :n].contiguous() for t, n in ((xh, 32), (pk, 16), (bs, 2))]
    bad = [  # (op, real arguments, their devices in the mode, message)
        ("_int8_gemm_sm90a", [aq, sa[:2], None, wq, sw], "cuda", "int8_matmul: a_scale must hold one element"),
        ("_int8_gemm_sm90a", [k40[0], sa, None, k40[1], sw], "cuda", "_int8_gemm_sm90a: K must be a multiple of 16"),
        ("_nvfp4_gemm_sm90a", k32 + [g], "cuda", "nvfp4_gemm: K must be a multiple of 64"),
        ("_fp8_block_gemv_sm90a", [xh, fq, F.quantize_fp8_block(w, 32)[1], 32], "cuda",
         "fp8_block_gemv: path 'wgmma' needs block_size % 64 == 0"),
        ("_fp8_block_gemm_sm90a", [xh, fq, fs], ["cuda", "cpu", "cuda"],
         "fp8_block_gemm: w_q is on cpu but the other operands are on cuda"),
    ]
    with FakeTensorMode():
        for name, (args, dtype) in cases.items():
            y = fakes[name](*_cuda_fakes(args))
            assert (y.device.type, tuple(y.shape), y.dtype) == ("cuda", (5, 24), dtype), name
            with pytest.raises(RuntimeError, match="must be a CUDA tensor|must be CUDA tensors"):
                fakes[name](*_cuda_fakes(args, "cpu"))
        for name, args, devices, msg in bad:
            with pytest.raises(RuntimeError, match=msg):
                fakes[name](*_cuda_fakes(args, devices))


# ------------------------------------------------------------ inference only --
def test_ops_are_inference_only():
    """csrc/common/inference_only.h: with an input that requires grad (grad mode on), an op's
    outputs are constants to autograd (no grad_fn, no silent zero gradient through a node), with
    a one-time C++ warning on stderr; none under torch.no_grad()."""
    import subprocess
    import sys

    x = torch.randn(4, 32, requires_grad=True)
    w_q, w_s, _ = ops.quantize_int8(torch.randn(8, 32), True, True)
    for outs in (ops.quantize_int8(x, True, True), ops.quantize_fp8_block(x, 16), ops.quantize_nvfp4(x)):
        assert all(not t.requires_grad and t.grad_fn is None for t in outs)
    xq, xs, _ = ops.quantize_int8(x.detach(), True, True)
    y = ops.int8_matmul(xq, xs, None, w_q, w_s, None, torch.randn(8, requires_grad=True))
    assert not y.requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.sum().backward()
    script = (
        "import torch, torchquant\n"
        "x = torch.randn(4, 32, requires_grad=True)\n"
        "with torch.no_grad():\n"
        "    torch.ops.torchquant.quantize_int8(x, True, True)\n"
        "print('quiet', flush=True)\n"
        "torch.ops.torchquant.quantize_int8(x, True, True)\n"
        "torch.ops.torchquant.quantize_fp8_block(x, 16)\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                       cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert r.returncode == 0, r.stderr[-2000:]
    msg = "torchquant's ops are inference-only; an input requires grad"
    assert r.stderr.count(msg) == 1, r.stderr[-2000:]


def test_wrappers_name_a_missing_tensor():
    """The typed wrappers of the one-tensor ops say which argument is missing (through torch.ops
    the dispatcher raises first, with its own wording)."""
    from torchquant import ops as tq

    for fn, args in ((tq.quantize_int8, ()), (tq.quantize_fp8_block, ()), (tq.quantize_fp8_act, ()),
                     (tq.nvfp4_relayout, (1,)), (tq.quantize_nvfp4, ()), (tq.prune24, ()), (tq.compress24, ())):
        with pytest.raises(TypeError, match=rf"{fn.__name__}: \w+ must be a tensor, got NoneType"):
            fn(None, *args)


def test_fake_size_bounds():
    """The size bounds the CUDA code adds (tile and chunk counts are rounded up in int): M, N below
    2^31 - 256 for fp8_block_gemv / nvfp4_gemv, K below 2^26 for nvfp4_gemv too (at K near 2^31 the
    mma GEMV's chunk count wrapped and the K loop never ran), and the 2:4 ops' M, N (K) below
    2^31 - 256 on every device. Meta / fake tensors: no memory is allocated."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    big = 2**31 - 200
    e4 = torch.float8_e4m3fn
    with FakeTensorMode():
        def t(*shape, dtype=torch.float16, device="cuda"):
            return torch.empty(*shape, dtype=dtype, device=device)
        K = 2**26
        with pytest.raises(RuntimeError, match="nvfp4_gemv: K = 67108864 must be below 2\\^26"):
            ops.nvfp4_gemv(t(2, K), t(1, K // 2, dtype=torch.uint8), t(1, K // 16, dtype=e4),
                           t((), dtype=torch.float32), None, "mma")
        with pytest.raises(RuntimeError, match="nvfp4_gemv: M and N must each be below 2\\^31 - 256"):
            ops.nvfp4_gemv(t(big, 64), t(1, 32, dtype=torch.uint8), t(1, 4, dtype=e4),
                           t((), dtype=torch.float32), None, "auto")
        with pytest.raises(RuntimeError, match="fp8_block_gemv: M and N must each be below 2\\^31 - 256"):
            ops.fp8_block_gemv(t(big, 64), t(1, 64, dtype=e4), t(1, 1, dtype=torch.float32), 64, None, "auto")
    for dev in ("meta", "cpu"):
        with FakeTensorMode():
            x = torch.empty(big, 32, dtype=torch.float16, device=dev)
            with pytest.raises(RuntimeError, match="sparse24_gemv: M, N and K must be below 2\\^31 - 256"):
                ops.sparse24_gemv(x, torch.empty(1, 16, dtype=torch.float16, device=dev),
                                  torch.empty(1, 4, dtype=torch.uint8, device=dev))


def test_torch_check_messages_are_callable():
    """torch._check's message must be a callable on torch 2.11 (the GPU machine's version; 2.13+
    also take a str): a str there raises TypeError instead of the check's error. CI runs a newer
    torch, so this scans the package's source for torch._check* calls whose message is not a
    lambda or a name bound to a function (the fakes' _check_all wraps a str itself)."""
    import ast
    import pathlib

    root = pathlib.Path(torchquant.__file__).parent
    bad = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        funcs = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for n in ast.walk(tree):
            if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr.startswith("_check") and isinstance(n.func.value, ast.Name)
                    and n.func.value.id == "torch"):
                continue
            msg = n.args[1] if len(n.args) > 1 else next((k.value for k in n.keywords if k.arg == "message"), None)
            if msg is None or isinstance(msg, ast.Lambda) or (isinstance(msg, ast.Name) and msg.id in funcs):
                continue
            bad.append(f"{path.relative_to(root)}:{n.lineno}: {ast.unparse(msg)}")
    assert not bad, "torch._check with a message that may not be callable:\n" + "\n".join(bad)
