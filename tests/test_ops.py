"""Every op through torch.ops.torchquant on CPU (and CUDA where present):
opcheck, bit-exactness against the pure-torch formats, numerics against the
float64 references with derived bounds, and clear errors for bad input.
"""

import pytest
import torch

import torchquant  # noqa: F401
from torchquant import formats as F
from torchquant import reference as ref

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
    return [
        (ops.int8_matmul, (d(aq), d(sa), d(za), d(wq), d(sw), d(cs), d(_rand(24, seed=3)), torch.float16, "auto")),
        (ops.int8_matmul, (d(aq), d(sa), None, d(wq), d(sw), None, None, None, "auto")),
        (ops.quantize_int8, (x, True, False)),
        (ops.quantize_int8, (x, False, True)),
        (ops.fp8_block_gemv, (xh, d(fq), d(fs), 32, None, "auto")),
        (ops.fp8_block_gemv, (xh, d(fq), d(fs), 32, None, "auto", True)),
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
        (ops.quantize_nvfp4, (w,)),
        (ops.dequantize_nvfp4, (d(pk), d(bs), d(g), None)),
        (ops.prune24, (w,)),
        (ops.compress24, (d(pruned),)),
        (ops.decompress24, (d(vals), d(meta))),
        (ops.sparse24_gemv, (xh, d(hv), d(hm), None, "auto")),
        (ops.sparse24_int8_matmul, (d(aq), d(sa), d(za), d(iv), d(im), d(sw), None, None, torch.bfloat16, "auto")),
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
    got = ops.int8_matmul(aq, s, z, wq, s, F.int8_colsum(wq), None, torch.float32, "auto")
    want = ref.int8_matmul_ref(aq, s, z, wq, s)
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
