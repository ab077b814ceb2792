"""QuantLinear and quantize_model: accuracy with derived bounds, dispatch,
state_dict / safetensors round trips, checkpoint interop, compile and graphs."""

import copy
import io

import pytest
import torch
from torch import nn

import torchquant  # noqa: F401
from torchquant import formats as F
from torchquant import reference as ref
from torchquant.nn import (QuantLinear, choose_path, load_prequantized, load_quantized, quantize_model, save_quantized,
                           set_static_weights)

from conftest import HAS_CUDA

DEVICES = ["cpu"] + (["cuda"] if HAS_CUDA else [])
ALL_FORMATS = ["int8", "fp8_block", "nvfp4", "sparse24", "int8_sparse24"]


def _linear(k=96, n=40, bias=True, seed=0, device="cpu"):
    torch.manual_seed(seed)
    lin = nn.Linear(k, n, bias=bias)
    with torch.no_grad():
        lin.weight.mul_(torch.logspace(-1, 0.5, k))  # channels of different scale
    return lin.to(device)


def _weight_error_bound(q: QuantLinear, w: torch.Tensor) -> torch.Tensor:
    """Per-element bound on |dequantized - w| from the format's rounding (derived)."""
    w = w.double()
    if q.format == "int8":
        return (q.weight_scale.double() / 2)[:, None].expand_as(w)
    if q.format == "fp8_block":
        s = q.weight_scale.double().repeat_interleave(q.block_size, 1)[:, : w.shape[1]]
        v = (w / s).abs()
        # e4m3: half an ulp is <= 2^-4 |v| for normals, 2^-10 in the subnormal range
        return s * torch.maximum(v * 2.0**-4, torch.full_like(v, 2.0**-10))
    s = q.weight_scale.double().repeat_interleave(16, 1) * q.weight_global_scale.double()
    v = (w / s).abs()
    half_step = torch.where(v < 2, 0.25, torch.where(v < 4, 0.5, 1.0))
    clamp_excess = torch.clamp(w.abs() - 6 * s, min=0)
    return torch.where(s > 0, s * half_step + clamp_excess, w.abs())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fmt", ["int8", "fp8_block", "nvfp4"])
# CUDA: 40 the GEMV past one M tile, 80 dequantize + cuBLAS; CPU: 160 dequantize + fp32 GEMM
@pytest.mark.parametrize("M", [1, 5, 16, 40, 80, 160])
def test_quantlinear_accuracy_within_derived_bound(device, fmt, M):
    lin = _linear(device=device)
    q = QuantLinear.from_float(lin, fmt, block_size=32)
    torch.manual_seed(M)
    x = torch.randn(M, 96, device=device, dtype=torch.bfloat16)
    y = q(x)
    assert y.dtype == torch.bfloat16 and y.shape == (M, 40)
    want = ref.linear_ref(x, lin.weight, lin.bias)
    if fmt == "int8":
        _, sa, _ = F.quantize_int8(x.float().cpu())
        bound = ref.quantization_bound(x.cpu(), lin.weight.detach().cpu(), sa, q.weight_scale.cpu()).to(device)
    else:
        eb = _weight_error_bound(q, lin.weight.detach())
        bound = x.double().abs() @ eb.T * 4.0  # slack 4, as formats.md
        if fmt == "fp8_block":
            wd = ref.dequantize_fp8_block_ref(q.weight_q, q.weight_scale, q.block_size)
        else:
            wd = ref.dequantize_nvfp4_ref(q._packed_layout0(), q.weight_scale, q.weight_global_scale)
        bound = bound + ref.fp32_accum_bound(x, wd, q.bias, torch.float32)
    bound = bound + want.abs() * 2.0**-8 + 2.0**-133  # the bf16 output rounding
    assert ref.worst_fraction(y, want, bound) <= 1.0


def _gamma(n: int, u: float) -> float:
    return n * u / (1 - n * u)


def _e4m3_half_step(v: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """Bound on |v - e4m3(v / s) * s| (v in the clamp range): half an ulp,
    <= 2^-4 |v| for normals, 2^-10 s on the subnormal grid."""
    return torch.maximum(v.abs() * 2.0**-4, s * 2.0**-10)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("M", [1, 16, 17, 64])
@pytest.mark.parametrize("bias", [False, True])
def test_fp8_block_w8a8_prefill_within_derived_bounds(device, M, bias):
    """prefill='w8a8': M <= 16 runs the W8A16 GEMV (bit-identical to the
    default layer); M > 16 quantizes x to e4m3 in 1 x 128 blocks and runs
    the W8A8 product (torch._scaled_mm on Hopper, fp32 emulation elsewhere).
    Two derived gates: (1) against float64 over the quantized operands x^,
    W^: the accumulation error, fp32 (CPU / emulation: gamma_{K+5}, u =
    2^-23, covering the two dequantize roundings, the bias add and the
    scales), or on Hopper's fp8 tensor cores a 128-long block sum kept to 14
    bits (u = 2^-13: the accumulator width reported for H800/H100 fp8 MMA by
    DeepSeek-V3, section 3.3.2) then fp32 across blocks; (2) against the
    exact float layer: the activation and weight rounding terms."""
    K, N = 256, 48
    lin = _linear(k=K, n=N, bias=bias, device=device)
    q = QuantLinear.from_float(lin, "fp8_block", block_size=128, prefill="w8a8")
    d = QuantLinear.from_float(lin, "fp8_block", block_size=128)
    torch.manual_seed(M)
    x = (torch.randn(M, K, device=device) * torch.logspace(-2, 1, K, device=device)).to(torch.bfloat16)
    y = q(x)
    assert y.dtype == torch.bfloat16 and y.shape == (M, N)
    if M <= 16:
        assert torch.equal(y, d(x))
        return
    path = choose_path("fp8_block", M, x.device, "w8a8")
    assert path in ("w8a8_mm", "w8a8_emulated")
    x_q, x_s = torch.ops.torchquant.quantize_fp8_act(x, 128)
    xh = ref.dequantize_fp8_block_ref(x_q.cpu(), x_s.cpu().contiguous(), 128)
    wh = ref.dequantize_fp8_block_ref(q.weight_q.cpu(), q.weight_scale.cpu(), 128)
    b = None if lin.bias is None else q.bias.cpu()
    want_q = ref.linear_ref(xh, wh, b)
    S = xh.abs() @ wh.abs().T + (0 if b is None else b.double().abs())
    if path == "w8a8_mm":
        acc = _gamma(128, 2.0**-13) + _gamma(K // 128 + 3, 2.0**-23)
    else:
        acc = _gamma(K + 5, 2.0**-23)
    e1 = acc * S
    if path == "w8a8_mm" and b is not None:
        # _scaled_mm rounds the product to bf16, then the bias is added in bf16:
        # one more rounding, of the bias-free product.
        e1 = e1 + 2.0**-8 * (ref.linear_ref(xh, wh, None).abs() + e1)
    bound1 = e1 + 2.0**-8 * (want_q.abs() + e1) + 2.0**-133  # bf16 output rounding
    assert ref.worst_fraction(y.cpu(), want_q, bound1) <= 1.0
    # (2) the whole chain against the float layer on the bf16 x
    xd, wd = x.cpu().double(), lin.weight.detach().cpu().double()
    want = ref.linear_ref(x.cpu(), lin.weight.detach().cpu(), None if lin.bias is None else lin.bias.detach().cpu())
    ex = _e4m3_half_step(xd, x_s.cpu().double().repeat_interleave(128, 1))
    ew = _e4m3_half_step(wd, q.weight_scale.cpu().double().repeat_interleave(128, 1))
    bias_round = 0 if lin.bias is None else (lin.bias.detach().cpu().double() - q.bias.cpu().double()).abs()
    bound2 = ex @ wd.abs().T + xh.abs() @ ew.T + bias_round + bound1
    assert ref.worst_fraction(y.cpu(), want, bound2) <= 1.0


def test_fp8_block_w8a8_constructor_checks_and_repr():
    lin = _linear(k=256, n=48)
    assert "prefill=w8a8" in repr(QuantLinear.from_float(lin, "fp8_block", prefill="w8a8"))
    for kw in (dict(format="fp8_block", block_size=64), dict(format="nvfp4"), dict(format="int8")):
        fmt = kw.pop("format")
        with pytest.raises(ValueError, match="prefill='w8a8' needs"):
            QuantLinear.from_float(lin, fmt, prefill="w8a8", **kw)
    with pytest.raises(ValueError, match="in_features a multiple of 128"):
        QuantLinear.from_float(_linear(k=96, n=48), "fp8_block", prefill="w8a8")
    with pytest.raises(ValueError, match="prefill must be"):
        QuantLinear.from_float(lin, "fp8_block", prefill="fast")
    m = nn.Sequential(_linear(k=256, n=48), _linear(k=48, n=256), _linear(k=256, n=16))
    with pytest.warns(UserWarning, match="cannot take prefill='w8a8'"):
        quantize_model(m, {"format": "fp8_block", "prefill": "w8a8", "overrides": {"2": {"format": "int8"}}},
                       progress=False)
    assert [m[i].prefill for i in range(3)] == ["w8a8", "dequant", "dequant"]
    assert m[2].format == "int8"


def _bf16_rounding(v: torch.Tensor) -> torch.Tensor:
    """Bound on |bf16(v) - v|: half an ulp (unit roundoff 2^-8) or half the smallest subnormal."""
    return v.detach().double().abs() * 2.0**-8 + 2.0**-134


# K = 20: an odd number of groups of 4, so the last meta byte is half padding.
# K = 256 on an H100/H200: M >= 64 runs the sparse-wgmma GEMM (K % 128 == 0).
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("K", [96, 20, 256])
@pytest.mark.parametrize("M", [1, 5, 16, 40, 80, 160])
def test_sparse24_accuracy_within_derived_bound(device, K, M):
    lin = _linear(k=K, device=device)
    q = QuantLinear.from_float(lin, "sparse24")
    pruned, mask = F.prune24(lin.weight.detach())  # the pure-torch recipe
    # Stored: exactly the fp32-pruned weight, each kept value rounded once to bf16.
    wd = q.dequantized_weight(torch.float32)
    assert torch.equal(wd, pruned.to(torch.bfloat16).float())
    assert q.weight_values.shape == (40, K // 2) and q.weight_meta.shape == (40, (K + 7) // 8)
    torch.manual_seed(M)
    x = torch.randn(M, K, device=device, dtype=torch.bfloat16)
    y = q(x)
    assert y.dtype == torch.bfloat16 and y.shape == (M, 40)
    # Against float64 over the PRUNED fp32 weight and fp32 bias: the bf16 rounding of
    # every kept weight (slack 4, as formats.md) and of the bias, then the kernel's fp32
    # accumulation and the bf16 output rounding.
    want = ref.linear_ref(x, pruned, lin.bias.detach())
    bound = x.double().abs() @ _bf16_rounding(pruned).T * ref.GATE_SLACK + _bf16_rounding(lin.bias)
    bound = bound + ref.fp32_accum_bound(x, wd, q.bias, torch.float32) + want.abs() * 2.0**-8 + 2.0**-133
    assert ref.worst_fraction(y, want, bound) <= 1.0
    # Against float64 over the stored operands: only the kernel's own arithmetic.
    exact = ref.linear_ref(x, wd, q.bias)
    assert ref.worst_fraction(y, exact, ref.fp32_accum_bound(x, wd, q.bias, torch.bfloat16)) <= 1.0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("K", [96, 20])
@pytest.mark.parametrize("M", [1, 5, 16, 40])
def test_int8_sparse24_accuracy_within_derived_bound(device, sym, K, M):
    lin = _linear(k=K, device=device)
    q = QuantLinear.from_float(lin, "int8_sparse24", act_symmetric=sym)
    # Stored: prune24 of the fp32 weight, then the int8 format's per-channel recipe
    # (the pure-torch formula runs on the CPU: torch's CUDA division by a Python
    # scalar multiplies by its reciprocal, an ulp off the ops' true division).
    pruned, _ = F.prune24(lin.weight.detach())
    w_q, s_w, _ = (t.to(device) for t in F.quantize_int8(pruned.cpu(), True, True))
    assert torch.equal(F.decompress24(q.weight_values, q.weight_meta), w_q)
    assert torch.equal(q.weight_scale, s_w)
    assert torch.equal(q.weight_colsum, F.int8_colsum(w_q))
    torch.manual_seed(M)
    x = torch.randn(M, K, device=device, dtype=torch.bfloat16)
    if not sym:
        x = torch.relu(x)  # the one-sided range a zero point is for
    y = q(x)
    assert y.dtype == torch.bfloat16 and y.shape == (M, 40)
    # the module's activation quantization, by the pure-torch formula on the CPU (see above)
    a_q, s_a, z_a = (t.to(device) for t in F.quantize_int8(x.float().cpu(), True, sym))
    want = ref.linear_ref(x, pruned, lin.bias.detach())
    bound = ref.quantization_bound(x, pruned, s_a, q.weight_scale) + _bf16_rounding(lin.bias)
    bound = bound + want.abs() * 2.0**-8 + 2.0**-133  # the bf16 output rounding
    assert ref.worst_fraction(y, want, bound) <= 1.0
    # Over the quantized operands the integer core is exact: only the fp32 epilogue rounds.
    a_zero = None if sym else z_a
    colsum = None if sym else q.weight_colsum
    exact = ref.int8_matmul_ref(a_q, s_a, a_zero, w_q, s_w, colsum, q.bias)
    assert ref.worst_fraction(y, exact, ref.int8_epilogue_bound(exact, q.bias, torch.bfloat16)) <= 1.0
    # ... and the op is bit-identical to int8_matmul over the decompressed weight.
    dense = torch.ops.torchquant.int8_matmul(a_q, s_a, a_zero, w_q, s_w, colsum, q.bias, torch.bfloat16, "auto")
    assert torch.equal(y, dense)


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_quantlinear_state_dict_and_safetensors_round_trip(tmp_path, fmt):
    pytest.importorskip("safetensors")
    model = nn.Sequential(_linear(n=48, seed=1), nn.ReLU(), _linear(k=48, n=32, seed=2))
    x = torch.randn(3, 96, dtype=torch.bfloat16)
    quantize_model(model, {"format": fmt, "block_size": 32}, progress=False)
    y = model(x)
    sd = model.state_dict()
    fresh = quantize_model(nn.Sequential(_linear(n=48, seed=5), nn.ReLU(), _linear(k=48, n=32, seed=6)),
                           {"format": fmt, "block_size": 32}, progress=False)
    fresh.load_state_dict(sd)
    assert torch.equal(fresh(x), y)
    path = str(tmp_path / "m.safetensors")
    save_quantized(model, path)
    loaded = load_quantized(nn.Sequential(_linear(n=48, seed=7), nn.ReLU(), _linear(k=48, n=32, seed=8)), path)
    assert isinstance(loaded[0], QuantLinear) and loaded[0].format == fmt
    assert torch.equal(loaded(x), y)


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_load_state_dict_storage_dtypes(fmt):
    """Code / byte buffers take their own dtype only (load_state_dict would convert by value);
    float scales and bias convert as nn.Linear's parameters do."""
    q = QuantLinear.from_float(_linear(n=48, seed=1), fmt, block_size=32)
    x = torch.randn(3, 96)
    y = q(x)
    sd = q.state_dict()
    storage = {"int8": ["weight_q"], "fp8_block": ["weight_q"], "nvfp4": ["weight_packed", "weight_scale"],
               "sparse24": ["weight_meta"], "int8_sparse24": ["weight_values", "weight_meta"]}[fmt]
    for name in storage:
        t = sd[name]
        for wrong in ([torch.uint8, torch.int8, torch.float32] if t.dtype == torch.float8_e4m3fn else
                      [torch.int8 if t.dtype == torch.uint8 else torch.uint8, torch.float32, torch.int32]):
            bad = dict(sd)
            bad[name] = t.view(wrong) if wrong.itemsize == 1 else t.to(wrong) if t.dtype != torch.float8_e4m3fn else t.float()
            fresh = QuantLinear.from_float(_linear(n=48, seed=2), fmt, block_size=32)
            hint = r"t\.view" if wrong.itemsize == 1 else ""
            with pytest.raises(RuntimeError, match=f"{name} must be {t.dtype}, got {bad[name].dtype}.*{hint}"):
                fresh.load_state_dict(bad)
    ok = dict(sd)
    for name in ("weight_scale", "bias", "weight_global_scale", "weight_colsum"):
        if name in ok and ok[name].dtype in (torch.float32, torch.int32):
            ok[name] = ok[name].to(torch.float64 if ok[name].is_floating_point() else torch.int64)
    fresh = QuantLinear.from_float(_linear(n=48, seed=2), fmt, block_size=32)
    fresh.load_state_dict(ok)
    assert torch.equal(fresh(x), y)


def test_from_fp8_block_and_from_nvfp4_refuse_broadcasts_and_byte_conversions():
    """copy_ broadcasts and converts by value; the constructors from quantized tensors must not:
    a [N, 1] scale spread over every block, a [1] bias over every feature and uint8 bytes read as
    numbers each gave a working layer with other weights."""
    w = torch.randn(8, 64)
    wq, sc = torch.ops.torchquant.quantize_fp8_block(w, 32)
    good = QuantLinear.from_fp8_block(wq, sc.double(), block_size=32, bias=torch.ones(8))  # float scales convert
    assert torch.equal(good.weight_scale, sc)
    cases = [
        (lambda: QuantLinear.from_fp8_block(wq, sc[:, :1], block_size=32), ValueError, r"weight_scale must have shape \(8, 2\)"),
        (lambda: QuantLinear.from_fp8_block(wq, sc, block_size=32, bias=torch.ones(1)), ValueError, r"bias must have shape \(8,\)"),
        (lambda: QuantLinear.from_fp8_block(wq.view(torch.uint8), sc, block_size=32), TypeError, r"pass t\.view\(torch\.float8_e4m3fn\)"),
        (lambda: QuantLinear.from_fp8_block(wq.reshape(-1), sc), ValueError, "w_q must be"),
    ]
    p, s_, g = torch.ops.torchquant.quantize_nvfp4(w)
    cases += [
        (lambda: QuantLinear.from_nvfp4(p, s_.view(torch.uint8), g), TypeError, "weight_scale must be torch.float8_e4m3fn"),
        (lambda: QuantLinear.from_nvfp4(p.view(torch.int8), s_, g), TypeError, "weight_packed must be torch.uint8"),
        (lambda: QuantLinear.from_nvfp4(p, s_[:, :1], g), ValueError, "weight_scale must have shape"),
        (lambda: QuantLinear.from_nvfp4(p, s_, torch.ones(2)), ValueError, "global_scale must hold one element"),
        (lambda: QuantLinear.from_nvfp4(p.reshape(-1), s_, g), ValueError, "w_packed must be"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()
    x = torch.randn(3, 64)
    for lay in (0, 1):
        q = QuantLinear.from_nvfp4(p, s_, g.reshape(1), dtype=torch.bfloat16, nvfp4_layout=lay)
        assert torch.equal(q.dequantized_weight(torch.float32), torch.ops.torchquant.dequantize_nvfp4(p, s_, g, torch.float32))
        assert q(x).shape == (3, 8)


@pytest.mark.parametrize("fmt", ALL_FORMATS)
@pytest.mark.parametrize("conv", ["half", "bfloat16", "float", "double", "to_fp16"])
def test_dtype_casts_keep_the_quantized_weight(fmt, conv):
    """quantize_model(m).half() and friends: Module._apply used to convert every floating buffer
    (e4m3 codes, fp32 scales) by value, after which every op refused the layer. The stored weight
    now keeps its dtype; the layer dtype (bias, the cast of fp32 input) follows a 16-bit cast
    (int8 layers also fp32); an nvfp4 layer in a decode order takes the new dtype's."""
    lay = "decode" if fmt == "nvfp4" else 0
    q = QuantLinear.from_float(_linear(n=48, seed=1), fmt, block_size=32, nvfp4_layout=lay)
    sd = {k: v.clone() for k, v in q.state_dict().items()}
    q2 = q.to(torch.float16) if conv == "to_fp16" else getattr(q, conv)()
    new = {"half": torch.float16, "to_fp16": torch.float16, "bfloat16": torch.bfloat16, "float": torch.float32,
           "double": torch.float64}[conv]
    follows = (torch.float16, torch.bfloat16) + ((torch.float32,) if fmt in ("int8", "int8_sparse24") else ())
    target = new if fmt != "sparse24" and new in follows else torch.bfloat16
    assert q2.dtype == target and q2.bias.dtype == target
    sd2 = q2.state_dict()
    for k, v in sd.items():
        if k != "bias":
            assert sd2[k].dtype == v.dtype and torch.equal(sd2[k].reshape(-1).view(torch.uint8), v.reshape(-1).view(torch.uint8)), k
    if fmt == "nvfp4":
        assert q2.nvfp4_layout == (2 if target == torch.float16 else 3)
    ref = QuantLinear(96, 48, True, fmt, block_size=32, dtype=target, nvfp4_layout=lay)
    ref.load_state_dict({**sd, "bias": sd["bias"].to(target)})
    for M in (1, 5, 200):
        for xd in (torch.float32, torch.float16, torch.bfloat16):
            x = torch.randn(M, 96, dtype=xd)
            assert torch.equal(q2(x), ref(x)), (M, xd)


def test_load_state_dict_int8_bytes_into_layout1_layer_raises():
    """Before the dtype check an int8 view of the packed weight skipped the relayout hook (which
    takes uint8 only) and was copied in as layout 0 bytes: silently wrong outputs."""
    q = QuantLinear.from_float(_linear(seed=1), "nvfp4", dtype=torch.bfloat16, nvfp4_layout="decode")
    sd = q.state_dict()
    sd["weight_packed"] = sd["weight_packed"].view(torch.int8)
    fresh = QuantLinear.from_float(_linear(seed=2), "nvfp4", dtype=torch.bfloat16, nvfp4_layout="decode")
    with pytest.raises(RuntimeError, match="weight_packed must be torch.uint8, got torch.int8"):
        fresh.load_state_dict(sd)


def test_quantize_model_skip_and_overrides():
    model = nn.Sequential()
    model.add_module("q_proj", _linear(seed=1))
    model.add_module("mlp", nn.Sequential(_linear(k=48, n=48, seed=2)))
    model.add_module("lm_head", _linear(k=48, n=10, seed=3))
    model.add_module("odd", _linear(k=20, n=8, seed=4))  # K = 20: not fp8/nvfp4-able
    with pytest.warns(UserWarning, match="odd"):
        quantize_model(model, {"format": "nvfp4", "skip": ["lm_head"], "overrides": {"mlp.*": {"format": "fp8_block", "block_size": 16}}}, progress=False)
    assert model.q_proj.format == "nvfp4"
    assert model.mlp[0].format == "fp8_block" and model.mlp[0].block_size == 16
    assert isinstance(model.lm_head, nn.Linear) and isinstance(model.odd, nn.Linear)
    with pytest.raises(ValueError, match="unknown config"):
        quantize_model(nn.Sequential(_linear()), {"format": "int8", "blocksize": 3})
    with pytest.raises(ValueError, match="format must be one of"):
        quantize_model(nn.Sequential(_linear()), "int4")
    for bad in (None, 5, ["int8"]):
        with pytest.raises(TypeError, match="config must be a format name or a dict"):
            quantize_model(nn.Sequential(_linear()), bad)
    with pytest.raises(TypeError, match="act_symmetric must be a bool"):
        quantize_model(nn.Sequential(_linear()), {"format": "int8", "act_symmetric": "false"})
    with pytest.raises(TypeError, match="block_size must be an int"):
        QuantLinear.from_float(_linear(), "fp8_block", block_size=32.0)
    for bs in (0, -16, 8, 17, 272, 512):  # at construction, not at the first forward
        with pytest.raises(ValueError, match=r"block_size must be a multiple of 16 in \[16, 256\]"):
            QuantLinear(32, 16, True, "fp8_block", block_size=bs, dtype=torch.bfloat16)
    # skip as one string is one pattern (not its characters); overrides' values checked up front
    model = nn.Sequential()
    model.add_module("q_proj", _linear(seed=1))
    model.add_module("lm_head", _linear(k=48, n=10, seed=3))
    quantize_model(model, {"format": "int8", "skip": "lm_head", "overrides": {"q_proj": "fp8_block"}}, progress=False)
    assert isinstance(model.lm_head, nn.Linear) and model.q_proj.format == "fp8_block"
    for cfg, err, msg in (
        ({"skip": 3}, TypeError, "'skip' must be a pattern or a list"),
        ({"skip": ["a", 1]}, TypeError, "'skip' must be a pattern or a list"),
        ({"overrides": ["q_proj"]}, TypeError, "'overrides' must be a dict"),
        ({"overrides": {"q_proj": 5}}, TypeError, r"overrides\['q_proj'\] must be a format name or a dict"),
        ({"overrides": {"q_proj": "int4"}}, ValueError, r"overrides\['q_proj'\] format must be one of"),
        ({"overrides": {"q_proj": {"blocksize": 16}}}, ValueError, r"unknown keys \['blocksize'\] in overrides"),
    ):
        with pytest.raises(err, match=msg):
            quantize_model(nn.Sequential(_linear()), {"format": "int8", **cfg}, progress=False)
    # patterns that name no nn.Linear (a typo in a module path) are reported, not silently ignored
    model = nn.Sequential()
    model.add_module("q_proj", _linear(seed=1))
    with pytest.warns(UserWarning, match=r"skip pattern\(s\) \['lm_haed'\] match no nn.Linear"):
        quantize_model(model, {"format": "int8", "skip": ["lm_haed"]}, progress=False)
    model = nn.Sequential()
    model.add_module("q_proj", _linear(seed=1))
    with pytest.warns(UserWarning, match=r"overrides pattern\(s\) \['mlp\.\*'\] match no nn.Linear"):
        quantize_model(model, {"format": "int8", "overrides": {"mlp.*": {"format": "nvfp4"}}}, progress=False)


def test_quantize_model_without_linears_warns():
    class Conv1D(nn.Module):  # GPT-2's projection type in transformers: not an nn.Linear
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(8, 4))

    with pytest.warns(UserWarning, match=r"no nn.Linear to quantize \(it has \['Conv1D'\]"):
        quantize_model(nn.Sequential(Conv1D(), nn.ReLU()), "int8", progress=False)
    m = quantize_model(nn.Sequential(_linear()), "int8", progress=False)
    with pytest.warns(UserWarning, match="no nn.Linear to quantize$"):  # already quantized
        quantize_model(m, "int8", progress=False)


def test_save_load_keeps_prefill_and_nvfp4_layout(tmp_path):
    """load_quantized rebuilds each layer with the prefill path and the nvfp4 decode order it was
    saved with (they were dropped before: a prefill="w8a8" layer came back as "dequant", whose
    large-M results differ by the activation's e4m3 rounding)."""
    pytest.importorskip("safetensors")
    model = nn.Sequential()
    model.add_module("a", _linear(k=256, n=128, seed=1))
    model.add_module("b", _linear(k=128, n=64, seed=2).to(torch.bfloat16))
    quantize_model(model, {"format": "fp8_block", "prefill": "w8a8", "overrides": {"b": {"format": "nvfp4", "prefill": "dequant"}},
                           "nvfp4_layout": "decode"}, progress=False)
    assert model.a.prefill == "w8a8" and model.b.nvfp4_layout == 3
    path = str(tmp_path / "m.safetensors")
    save_quantized(model, path)
    fresh = nn.Sequential()
    fresh.add_module("a", _linear(k=256, n=128, seed=3))
    fresh.add_module("b", _linear(k=128, n=64, seed=4).to(torch.bfloat16))
    loaded = load_quantized(fresh, path)
    assert loaded.a.prefill == "w8a8" and loaded.b.nvfp4_layout == 3
    assert torch.equal(loaded.b.weight_packed, model.b.weight_packed)
    for M in (1, 200):
        x = torch.randn(M, 256)
        assert torch.equal(loaded.a(x), model.a(x))
        xb = torch.randn(M, 128, dtype=torch.bfloat16)
        assert torch.equal(loaded.b(xb), model.b(xb))


def test_quantize_model_sparse24_formats():
    model = nn.Sequential()
    model.add_module("q_proj", _linear(n=48, seed=1))
    model.add_module("mlp", nn.Sequential(_linear(k=48, n=48, seed=2)))
    model.add_module("odd", _linear(k=22, n=8, seed=4))  # K = 22: not groups of 4
    x = torch.randn(3, 96)
    with torch.no_grad():
        want = model[:2](x)
    with pytest.warns(UserWarning, match="odd has in_features=22, not a multiple of 4"):
        quantize_model(model, {"format": "sparse24", "overrides": {"mlp.*": {"format": "int8_sparse24", "act_symmetric": False}}},
                       progress=False)
    assert model.q_proj.format == "sparse24" and model.q_proj.weight_values.dtype == torch.bfloat16
    assert model.mlp[0].format == "int8_sparse24" and not model.mlp[0].act_symmetric
    assert isinstance(model.odd, nn.Linear)
    for m, (n, k) in ((model.q_proj, (48, 96)), (model.mlp[0], (48, 48))):
        # half the values are stored, and what they decompress to is 2:4
        assert m.weight_values.shape == (n, k // 2)
        dense = F.decompress24(m.weight_values, m.weight_meta)
        assert int((dense.view(n, k // 4, 4) != 0).sum(-1).max()) <= 2
    # the same layers as from_float builds them
    ref_q = QuantLinear.from_float(_linear(n=48, seed=1), "sparse24")
    assert torch.equal(model.q_proj.weight_values, ref_q.weight_values)
    assert torch.equal(model.q_proj.weight_meta, ref_q.weight_meta)
    # pruning half the weights moves the output, but not beyond recognition
    got = model[:2](x)
    assert got.shape == want.shape and torch.isfinite(got).all()
    assert float(torch.nn.functional.cosine_similarity(got.flatten(), want.flatten(), dim=0)) > 0.5


def test_sparse24_bad_shapes_and_dtypes():
    for fmt in ("sparse24", "int8_sparse24"):
        with pytest.raises(ValueError, match=f"{fmt} needs in_features divisible by 4 .*got 18"):
            QuantLinear.from_float(nn.Linear(18, 8), fmt)
        with pytest.raises(ValueError, match="divisible by 4"):
            QuantLinear(30, 8, format=fmt)
    # sparse24_gemv takes fp16 / bf16 values only
    with pytest.raises(TypeError, match="float16 or bfloat16"):
        QuantLinear.from_float(nn.Linear(16, 8), "sparse24", dtype=torch.float32)
    for fmt in ("fp8_block", "nvfp4"):  # accepted before, then failed at every decode M with fp32 x
        with pytest.raises(TypeError, match="dtype must be float16 or bfloat16, got float32"):
            QuantLinear.from_float(nn.Linear(32, 8), fmt, block_size=16, dtype=torch.float32)
    # fp16 layers keep fp16 values, and an activation of another dtype is cast to them
    q = QuantLinear.from_float(_linear(), "sparse24", dtype=torch.float16)
    assert q.weight_values.dtype == torch.float16
    x = torch.randn(2, 96, dtype=torch.bfloat16)
    assert torch.equal(q(x), q(x.to(torch.float16)).to(torch.bfloat16))


def test_quantlinear_asymmetric_int8_after_relu():
    lin = _linear(seed=3)
    q = QuantLinear.from_float(lin, "int8", act_symmetric=False)
    x = torch.relu(torch.randn(6, 96))
    y = q(x)
    assert y.dtype == torch.float32
    _, sa, _ = F.quantize_int8(x, True, False)
    bound = ref.quantization_bound(x, lin.weight.detach(), sa, q.weight_scale) + 2.0**-20
    assert ref.worst_fraction(y, ref.linear_ref(x, lin.weight, lin.bias), bound) <= 1.0


def test_checkpoint_interop_into_quantlinear():
    lin = _linear(k=64, n=24, seed=4)
    p, s, g = F.quantize_nvfp4(lin.weight.detach())
    ct = F.nvfp4_to_compressed_tensors(p, s, g)
    q = QuantLinear.from_nvfp4(*F.nvfp4_from_compressed_tensors(ct["weight_packed"], ct["weight_scale"], ct["weight_global_scale"]),
                               bias=lin.bias.detach().to(torch.bfloat16))
    q2 = QuantLinear.from_float(lin, "nvfp4")
    x = torch.randn(2, 64, dtype=torch.bfloat16)
    # the reciprocal global scale survives the round trip to within one fp32 rounding
    assert torch.allclose(q(x).float(), q2(x).float(), rtol=2**-7, atol=1e-6)
    w_q, sc = F.quantize_fp8_block(lin.weight.detach(), 128)
    q3 = QuantLinear.from_fp8_block(w_q, sc, 128)
    assert torch.equal(q3.weight_q.view(torch.uint8), w_q.view(torch.uint8))
    # a per-channel FP8 checkpoint (compressed-tensors' channel strategy) through fp8_block
    amax = lin.weight.detach().abs().amax(1, keepdim=True)
    ch_scale = amax / 448
    ch_q = (lin.weight.detach() / ch_scale).to(torch.float8_e4m3fn)
    q4 = QuantLinear.from_fp8_block(*F.fp8_from_compressed_tensors(ch_q, ch_scale, 32), 32,
                                    bias=lin.bias.detach().to(torch.bfloat16))
    assert torch.equal(q4.dequantized_weight(torch.float32), ch_q.float() * ch_scale)
    x = torch.randn(3, 64, dtype=torch.bfloat16)  # the op itself is checked against its bound elsewhere
    assert torch.equal(q4(x), torch.ops.torchquant.fp8_block_gemv(x, q4.weight_q, q4.weight_scale, 32, q4.bias, "auto"))
    # an int8 W8A8 checkpoint (compressed-tensors, channel strategy, symmetric): the same layer as
    # from_float's, whose quantizer rounds the same way
    w = lin.weight.detach()
    sc = w.abs().amax(1, keepdim=True) / 127
    wq = torch.round(w / sc).clamp(-127, 127).to(torch.int8)
    for sym in (True, False):
        q5 = QuantLinear.from_int8(*F.int8_from_compressed_tensors(wq, sc, torch.zeros(24, 1, dtype=torch.int8)),
                                   bias=lin.bias.detach().to(torch.bfloat16), act_symmetric=sym)
        q6 = QuantLinear.from_float(lin, "int8", act_symmetric=sym)
        assert all(torch.equal(a, b) for a, b in zip(q5.state_dict().values(), q6.state_dict().values()))
        assert torch.equal(q5(x), q6(x)) and torch.equal(q5(x.float()), q6(x.float()))
    q7 = QuantLinear.from_int8(wq, torch.tensor(0.01))  # per tensor
    assert torch.equal(q7.weight_scale, torch.full((24,), 0.01))
    with pytest.raises(TypeError, match="weight_q must be torch.int8"):
        QuantLinear.from_int8(wq.view(torch.uint8), sc)
    with pytest.raises(ValueError, match=r"weight_scale must have shape \(24,\)"):
        QuantLinear.from_int8(wq, sc[:3])
    with pytest.raises(ValueError, match="NaN or Inf"):
        QuantLinear.from_int8(wq, torch.full((24,), float("nan")))
    with pytest.raises(ValueError, match="nonzero weight_zero_point"):
        F.int8_from_compressed_tensors(wq, sc, torch.ones(24, 1, dtype=torch.int8))
    with pytest.raises(ValueError, match="group strategies"):
        F.int8_from_compressed_tensors(wq, torch.rand(24, 2))


def _prequantized_checkpoint(model, kinds):
    """A state dict with each Linear of `model` stored the way another tool writes it (kinds[i]:
    'ct_nvfp4', 'mo_nvfp4', 'ct_fp8_channel', 'mo_fp8', 'ds_fp8', 'ct_int8' or 'float'), plus the
    QuantLinear each should load as (None for float)."""
    sd, want = {}, {}
    for (name, lin), kind in zip([(n, m) for n, m in model.named_modules() if isinstance(m, nn.Linear)], kinds):
        w, b = lin.weight.detach(), lin.bias.detach()
        sd[f"{name}.bias"] = b
        if kind in ("ct_nvfp4", "mo_nvfp4"):
            p, sc, g = F.quantize_nvfp4(w)
            if kind == "ct_nvfp4":
                sd.update({f"{name}.{k}": v for k, v in F.nvfp4_to_compressed_tensors(p, sc, g).items()})
                sd[f"{name}.input_global_scale"] = torch.tensor([1.0])
                want[name] = QuantLinear.from_nvfp4(*F.nvfp4_from_compressed_tensors(p, sc, sd[f"{name}.weight_global_scale"]),
                                                    b.to(torch.bfloat16))
            else:
                sd.update({f"{name}.weight": p, f"{name}.weight_scale": sc, f"{name}.weight_scale_2": g,
                           f"{name}.input_scale": torch.tensor(1.0)})
                want[name] = QuantLinear.from_nvfp4(p, sc, g, b.to(torch.bfloat16))
        elif kind in ("ct_fp8_channel", "mo_fp8", "ds_fp8"):
            if kind == "ct_fp8_channel":
                s = w.abs().amax(1, keepdim=True) / 448
            elif kind == "mo_fp8":
                s = w.abs().amax() / 448
            else:
                s = torch.full(((w.shape[0] + 127) // 128, (w.shape[1] + 127) // 128), float(w.abs().amax() / 448))
            full = s if s.dim() < 2 or s.shape[1] == 1 else s.repeat_interleave(128, 0)[:w.shape[0]].repeat_interleave(128, 1)[:, :w.shape[1]]
            wq = (w / full).to(torch.float8_e4m3fn)
            sd[f"{name}.weight"] = wq
            sd[f"{name}.weight_scale_inv" if kind == "ds_fp8" else f"{name}.weight_scale"] = s
            want[name] = QuantLinear.from_fp8_block(*F.fp8_from_compressed_tensors(wq, s, 128), 128, b.to(torch.bfloat16))
        elif kind == "ct_int8":
            s = w.abs().amax(1, keepdim=True) / 127
            wq = torch.round(w / s).clamp(-127, 127).to(torch.int8)
            sd.update({f"{name}.weight": wq, f"{name}.weight_scale": s,
                       f"{name}.weight_zero_point": torch.zeros_like(s, dtype=torch.int8)})
            want[name] = QuantLinear.from_int8(wq, s, b.to(torch.bfloat16))
        else:
            sd[f"{name}.weight"] = w
            want[name] = None
    return sd, want


@pytest.mark.parametrize("kinds", [("ct_nvfp4", "ct_fp8_channel", "float"), ("mo_nvfp4", "mo_fp8", "ct_int8"),
                                   ("ds_fp8", "float", "ct_nvfp4")])
def test_load_prequantized_checkpoints(kinds):
    """load_prequantized: each Linear of a float model replaced by the QuantLinear its checkpoint
    tensors describe (key names and dtypes of ModelOpt, compressed-tensors and DeepSeek), the
    other tensors loaded as they are; outputs equal the layers built from the same tensors."""
    def make(seed):
        torch.manual_seed(seed)
        return nn.Sequential(nn.Linear(256, 144), nn.LayerNorm(144), nn.Linear(144, 64),
                             nn.ReLU(), nn.Linear(64, 32))
    src = make(1)
    with torch.no_grad():
        src[1].weight.uniform_(0.5, 1.5)
    sd, want = _prequantized_checkpoint(src, kinds)
    sd.update({f"1.{k}": v for k, v in src[1].state_dict().items()})
    dst = make(2)
    got = load_prequantized(dst, sd)
    names = ["0", "2", "4"]
    assert got == {n: want[n].format for n in names if want[n] is not None}
    x = torch.randn(5, 256, dtype=torch.bfloat16)
    ref = x
    for i, n in enumerate(names):
        layer = want[n] if want[n] is not None else src[int(n)].to(torch.bfloat16)
        if want[n] is not None:
            assert isinstance(dst[int(n)], QuantLinear)
            assert all(torch.equal(a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8))
                       for a, b in zip(dst[int(n)].state_dict().values(), want[n].state_dict().values()))
        ref = layer(ref)
        if n == "0":
            ref = src[1].to(torch.bfloat16)(ref)
        if n == "2":
            ref = torch.relu(ref)
    assert torch.equal(dst.to(torch.bfloat16)(x), ref)
    # a model built on the meta device (no memory for the float weights) loads the same
    with torch.device("meta"):
        meta = make(4)
    assert load_prequantized(meta, sd) == got
    assert not any(t.is_meta for t in list(meta.parameters()) + list(meta.buffers()))
    assert torch.equal(meta.to(torch.bfloat16)(x), ref)
    # strict: a leftover key or a missing parameter raises
    with pytest.raises(RuntimeError, match="unused keys"):
        load_prequantized(make(3), {**sd, "extra.weight": torch.ones(1)})
    with pytest.raises(RuntimeError, match="missing keys"):
        load_prequantized(make(3), {k: v for k, v in sd.items() if not k.startswith("1.")})
    with pytest.raises(RuntimeError, match=r"missing keys \['0.bias'\]"):  # the model's bias has no tensor
        load_prequantized(make(3), {k: v for k, v in sd.items() if k != "0.bias"})
    assert load_prequantized(make(3), {k: v for k, v in sd.items() if k != "0.bias"}, strict=False) == got
    no_scale = {k: v for k, v in sd.items() if not k.endswith("weight_scale") and not k.endswith("weight_scale_inv")}
    with pytest.raises(ValueError, match="the checkpoint has no 0.weight_scale"):
        load_prequantized(make(3), no_scale)
    with pytest.raises(ValueError, match="model is itself an nn.Linear"):
        load_prequantized(nn.Linear(256, 144), {k[2:]: v for k, v in sd.items() if k.startswith("0.")})
    with pytest.raises(ValueError, match="in the model but"):
        load_prequantized(nn.Sequential(nn.Linear(128, 144), nn.LayerNorm(144), nn.Linear(144, 64), nn.ReLU(),
                                        nn.Linear(64, 32)), sd)
    # ModelOpt's AWQ / SmoothQuant pre_quant_scale changes the layer's function: all ones loads,
    # anything else raises, strict or not (dropping it gave wrong outputs silently)
    if kinds[0] != "float":
        ones = {**sd, "0.pre_quant_scale": torch.ones(256, dtype=torch.bfloat16)}
        assert load_prequantized(make(3), ones) == got
        for strict in (True, False):
            with pytest.raises(ValueError, match="0.pre_quant_scale .* is not supported"):
                load_prequantized(make(3), {**sd, "0.pre_quant_scale": torch.full((256,), 0.5)}, strict=strict)


def test_load_prequantized_modelopt_fp8_block_scales():
    """ModelOpt FP8_PB_WO stores its 128 x 128 block scales as [ceil(N/128), 1, ceil(K/128), 1]."""
    torch.manual_seed(9)
    w = torch.randn(256, 384)
    s = torch.rand(2, 3) * 0.01 + 1e-3
    full = s.repeat_interleave(128, 0).repeat_interleave(128, 1)
    # clamped: casts past e4m3's 448 give NaN in some torch versions (2.11) and saturate in others
    wq = (w / full).clamp(-448, 448).to(torch.float8_e4m3fn)
    model = nn.Sequential(nn.Linear(384, 256, bias=False))
    assert load_prequantized(model, {"0.weight": wq, "0.weight_scale": s.reshape(2, 1, 3, 1)}) == {"0": "fp8_block"}
    assert torch.equal(model[0].dequantized_weight(torch.float32), wq.float() * full)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_empty_batch_gives_empty_output(device, fmt):
    """As nn.Linear: zero rows in, zero rows out, in the input's dtype (an MoE expert
    that received no token), not the ops' empty-operand error."""
    kw = {"dtype": torch.bfloat16} if fmt == "sparse24" else {}
    q = QuantLinear.from_float(_linear(device=device), fmt, **kw)
    for shape in [(0, 96), (2, 0, 96)]:
        x = torch.randn(*shape, device=device, dtype=torch.bfloat16)
        y = q(x)
        assert y.shape == (*shape[:-1], 40) and y.dtype == torch.bfloat16 and y.device == x.device


@pytest.mark.parametrize("fmt", ALL_FORMATS)
@pytest.mark.parametrize("dtype", [torch.float64, torch.int64, torch.int8])
def test_unsupported_input_dtype_raises(fmt, dtype):
    kw = {"dtype": torch.bfloat16} if fmt == "sparse24" else {}
    q = QuantLinear.from_float(_linear(), fmt, **kw)
    with pytest.raises(TypeError, match="x must be float32, float16 or bfloat16"):
        q(torch.ones(3, 96, dtype=dtype))


def test_dispatch_buckets():
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert choose_path("nvfp4", 1, cpu) == "cpu"
    assert choose_path("int8", 1, cuda) == "int8_mma"
    assert choose_path("fp8_block", 16, cuda) == "gemv"
    assert choose_path("nvfp4", 17, cuda) == "gemv" and choose_path("nvfp4", 64, cuda) == "gemv"
    assert choose_path("nvfp4", 65, cuda) == "dequant_mm"
    assert choose_path("sparse24", 40, cpu) == "cpu" and choose_path("int8_sparse24", 40, cpu) == "cpu"
    for fmt in ("fp8_block", "nvfp4", "sparse24"):
        assert choose_path(fmt, 127, cpu) == "cpu" and choose_path(fmt, 128, cpu) == "dequant_mm"
    assert choose_path("int8", 4096, cpu) == "cpu" and choose_path("int8_sparse24", 4096, cpu) == "cpu"
    assert choose_path("fp8_block", 4096, cpu, "w8a8") == "w8a8_emulated"
    assert choose_path("sparse24", 16, cuda) == "gemv"
    assert choose_path("sparse24", 64, cuda) == "gemv" and choose_path("sparse24", 65, cuda) == "dequant_mm"
    assert choose_path("int8_sparse24", 1, cuda) == "int8_mma" and choose_path("int8_sparse24", 4096, cuda) == "int8_mma"
    assert choose_path("fp8_block", 17, cpu, "w8a8") == "w8a8_emulated"
    assert choose_path("fp8_block", 16, cpu, "w8a8") == "cpu"
    assert choose_path("fp8_block", 16, cuda, "w8a8") == "gemv"
    assert choose_path("fp8_block", 64, cuda) == "gemv" and choose_path("fp8_block", 65, cuda) == "dequant_mm"  # n unknown
    # The dequantizing wgmma GEMM (sm_90 with the sm_90a module) takes fp8_block from
    # FP8_WGMMA_MIN_M on: every layer up to FP8_WGMMA_SMALL_N_MAX_M, large-N layers at any M.
    from torchquant.nn.dispatch import FP8_WGMMA_MIN_M, FP8_WGMMA_MIN_N, FP8_WGMMA_SMALL_N_MAX_M, fp8_wgmma_runs
    big, small = FP8_WGMMA_MIN_N, FP8_WGMMA_MIN_N - 1
    if fp8_wgmma_runs(cuda):
        assert choose_path("fp8_block", FP8_WGMMA_MIN_M, cuda, n=small) == "dq_wgmma"
        assert choose_path("fp8_block", FP8_WGMMA_SMALL_N_MAX_M, cuda, n=small) == "dq_wgmma"
        assert choose_path("fp8_block", FP8_WGMMA_SMALL_N_MAX_M + 1, cuda, n=small) == "dequant_mm"
        assert choose_path("fp8_block", 8192, cuda, n=big) == "dq_wgmma"
    else:
        assert choose_path("fp8_block", FP8_WGMMA_MIN_M, cuda, n=big) == "gemv"
        assert choose_path("fp8_block", 8192, cuda, n=big) == "dequant_mm"
    assert choose_path("fp8_block", FP8_WGMMA_MIN_M - 1, cuda, n=big) == "gemv"
    assert choose_path("fp8_block", 8192, cpu, n=big) == "dequant_mm"
    assert choose_path("nvfp4", 65, cuda, "w8a8") == "dequant_mm"  # w8a8 is an fp8_block option
    # nvfp4 through its wgmma GEMM (K % 64 == 0): every layer up to NVFP4_WGMMA_SMALL_N_MAX_M,
    # large-N layers up to NVFP4_WGMMA_MAX_M; K % 64 != 0 keeps the GEMV / dequantize paths.
    # Where nvfp4_gemv's own Hopper GEMV runs (K % 256 == 0), M <= NVFP4_GEMV_WGMMA_MAX_M stays
    # with the op ("gemv"); K = 4096 + 64 (K % 64 == 0 only) goes to the GEMM from NVFP4_WGMMA_MIN_M.
    from torchquant.nn.dispatch import (NVFP4_GEMV_WGMMA_MAX_M, NVFP4_WGMMA_MAX_M, NVFP4_WGMMA_MIN_M,
                                        NVFP4_WGMMA_MIN_N, NVFP4_WGMMA_SMALL_N_MAX_M,
                                        nvfp4_gemv_wgmma_runs, nvfp4_wgmma_runs)
    big, small = NVFP4_WGMMA_MIN_N, NVFP4_WGMMA_MIN_N - 1
    if nvfp4_gemv_wgmma_runs(cuda, 4096):
        assert choose_path("nvfp4", NVFP4_WGMMA_MIN_M, cuda, k=4096, n=big) == "gemv"
        assert choose_path("nvfp4", NVFP4_GEMV_WGMMA_MAX_M, cuda, k=4096, n=small) == "gemv"
        assert choose_path("nvfp4", NVFP4_GEMV_WGMMA_MAX_M + 1, cuda, k=4096, n=small) == "dq_wgmma"
        assert choose_path("nvfp4", NVFP4_WGMMA_MIN_M, cuda, k=4096 + 64, n=small) == "dq_wgmma"
    if nvfp4_wgmma_runs(cuda, 4096):
        assert choose_path("nvfp4", NVFP4_GEMV_WGMMA_MAX_M + 1, cuda, k=4096, n=small) == "dq_wgmma"
        assert choose_path("nvfp4", NVFP4_WGMMA_SMALL_N_MAX_M, cuda, k=4096, n=small) == "dq_wgmma"
        assert choose_path("nvfp4", NVFP4_WGMMA_SMALL_N_MAX_M + 1, cuda, k=4096, n=small) == "dequant_mm"
        assert choose_path("nvfp4", NVFP4_WGMMA_MAX_M, cuda, k=4096, n=big) == "dq_wgmma"
        assert choose_path("nvfp4", NVFP4_WGMMA_MAX_M + 1, cuda, k=4096, n=big) == "dequant_mm"
    else:
        assert choose_path("nvfp4", NVFP4_WGMMA_MIN_M, cuda, k=4096, n=big) == "gemv"
        assert choose_path("nvfp4", NVFP4_WGMMA_MAX_M, cuda, k=4096, n=big) == "dequant_mm"
    assert choose_path("nvfp4", NVFP4_WGMMA_MIN_M, cuda, k=4096 + 32, n=big) == "gemv"
    assert choose_path("nvfp4", NVFP4_WGMMA_MAX_M, cuda, k=4096 + 32, n=big) == "dequant_mm"
    assert choose_path("nvfp4", NVFP4_WGMMA_MIN_M - 1, cuda, k=4096, n=big) == "gemv"
    with pytest.raises(ValueError):
        choose_path("fp8_block", 17, cpu, "int4")
    with pytest.raises(ValueError):
        choose_path("int4", 1, cpu)


def test_quantlinear_bad_inputs():
    with pytest.raises(ValueError, match="format must be"):
        QuantLinear(16, 8, format="int4")
    with pytest.raises(ValueError, match="divisible by 16"):
        QuantLinear(20, 8, format="nvfp4")
    q = QuantLinear.from_float(_linear(), "int8")
    with pytest.raises(ValueError, match="expected last dim 96"):
        q(torch.randn(2, 95))
    with pytest.raises(ValueError, match="expected last dim 96"):
        q(torch.tensor(1.0))  # a 0-d input (was an IndexError)
    lin = _linear()
    with torch.no_grad():
        lin.weight[0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN or Inf"):
        QuantLinear.from_float(lin, "fp8_block")


@pytest.mark.parametrize("fmt", ALL_FORMATS + ["nvfp4_layout1", "fp8_block_static", "nvfp4_static", "int8_static",
                                 "int8_sparse24_static"])
def test_compile_fullgraph_no_graph_break(fmt):
    torch._dynamo.reset()  # fresh recompile budget: every test compiles a new module's forward
    kw = {"nvfp4_layout": 1} if fmt == "nvfp4_layout1" else {"static_weights": True} if "static" in fmt else {}
    q = QuantLinear.from_float(_linear(), fmt.replace("_layout1", "").replace("_static", ""), block_size=32, **kw)
    x = torch.randn(4, 96, dtype=torch.bfloat16)
    compiled = torch.compile(q, fullgraph=True, backend="aot_eager")
    assert torch.equal(compiled(x), q(x))


@pytest.mark.parametrize("fmt", ["int8", "fp8_block", "nvfp4"])
def test_compile_in_grad_mode(fmt):
    """A model run without torch.no_grad() whose other parameters require grad: the QuantLinear's
    input requires grad. Eager and compiled forwards work and agree; the quantized layer's output
    is a constant to autograd (csrc/common/inference_only.h), so AOTAutograd has no backward to
    trace through it."""
    torch._dynamo.reset()
    model = nn.Sequential(nn.LayerNorm(96, dtype=torch.bfloat16),
                          QuantLinear.from_float(_linear(), fmt, block_size=32))
    x = torch.randn(4, 96, dtype=torch.bfloat16)
    eager = model(x)
    assert not eager.requires_grad
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    assert torch.equal(compiled(x), eager)


GRAPH_CASES = ([(f, {}, 8) for f in ALL_FORMATS] + [("fp8_block", {"prefill": "w8a8"}, 64)]
               # the GEMVs past one 16-row tile (dispatch.LAYER_GEMV_MAX_M): capturable, no host sync
               + [(f, {}, 64) for f in ("fp8_block", "nvfp4", "sparse24")]
               # nvfp4 word layout 1 (bf16): the GEMVs read it, and at M = 64 on sm_90 the decoding GEMM
               + [("nvfp4", {"nvfp4_layout": 1}, m) for m in (1, 8, 64)]
               # static_weights: the sm_90 GEMVs load the weight before the PDL wait
               + [(f, {"static_weights": True}, m) for f in ("fp8_block", "nvfp4", "int8", "int8_sparse24") for m in (1, 8)])


@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
@pytest.mark.parametrize("fmt,kw,M", GRAPH_CASES,
                         ids=[f"{f}-{'-'.join(f'{k}{v}' if k == 'nvfp4_layout' else 'static' if k == 'static_weights' else str(v) for k, v in kw.items()) or 'default'}-M{m}"
                              for f, kw, m in GRAPH_CASES])
def test_cuda_graph_capture_and_inductor(fmt, kw, M):
    """CUDA graph capture and torch.compile(fullgraph) give the eager bits (M = 8:
    the decode paths; M = 64: the GEMVs in four 16-row tiles, or with
    prefill='w8a8' quantize_fp8_act + _scaled_mm)."""
    torch._dynamo.reset()  # fresh recompile budget: every test compiles a new module's forward
    q = QuantLinear.from_float(_linear(k=256, n=128).cuda(), fmt, **kw)
    x = torch.randn(M, 256, device="cuda", dtype=torch.bfloat16)
    eager = q(x)
    g = torch.cuda.CUDAGraph()
    static_x = x.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        q(static_x)  # warm up outside the capture
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        static_y = q(static_x)
    static_x.copy_(x)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(static_y, eager)
    compiled = torch.compile(q, fullgraph=True)
    assert torch.equal(compiled(x), eager)


# ---------------------------------------------- nvfp4 word layouts 1, 2 and 3 --
def _kernel_x(q, x2):
    """The activation QuantLinear.forward hands the nvfp4 kernels: 16-bit x as given, fp32 cast to
    the layer dtype."""
    return x2 if x2.dtype in (torch.float16, torch.bfloat16) else x2.to(q.dtype)


def _layout3_gemv_runs(q, x2):
    """Whether QuantLinear runs nvfp4_gemv on a layout-3 buffer for x2: a layout-3 layer on an
    sm_80+ GPU, bf16 kernel x (bf16 given, or fp32 cast to the bf16 layer dtype), an M that takes
    the GEMV. Layout 3's kernels (mma / wgmma GEMVs, and the direct GEMV by nvfp4_gemv.cu
    direct_rule) give each mma the products of adjacent codes, layout 0's the pairs (c, c + 4):
    other partial sums, so other bits than layout 0's (the decoding GEMM reads each lane's two
    adjacent codes from either layout alike: layout 0's bits)."""
    return (x2.is_cuda and q.nvfp4_layout == 3 and _kernel_x(q, x2).dtype == torch.bfloat16
            and torch.cuda.get_device_capability(x2.device) >= (8, 0)
            and choose_path("nvfp4", x2.shape[0], x2.device, q.prefill, q.in_features, q.out_features) == "gemv")


def _layout0_or_layout3_op(q, q0, x):
    """What the decode-order layer q gives for x: the bits of q0 (the same weight in layout 0), or,
    where the layer runs nvfp4_gemv on layout 3, those of the op on q's buffer (path auto), which
    must also lie within the fp32-accumulation bound of a float64 reference."""
    x2 = x.reshape(-1, q.in_features)
    if not _layout3_gemv_runs(q, x2):
        return q0(x)
    xa = _kernel_x(q, x2.contiguous())
    b = None if q.bias is None else q.bias.to(xa.dtype)
    y = torch.ops.torchquant.nvfp4_gemv(xa, q.weight_packed, q.weight_scale, q.weight_global_scale, b, "auto", 3)
    wd = ref.dequantize_nvfp4_ref(q._packed_layout0(), q.weight_scale, q.weight_global_scale)
    frac = ref.worst_fraction(y, ref.linear_ref(xa, wd, b), ref.fp32_accum_bound(xa, wd, b, xa.dtype))
    assert frac <= 1.0, (tuple(x2.shape), frac)
    return y.to(x.dtype).reshape(*x.shape[:-1], q.out_features)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,lay", [(torch.bfloat16, 1), (torch.bfloat16, 3), (torch.float16, 2)],
                         ids=["bf16-l1", "bf16-l3", "fp16-l2"])
@pytest.mark.parametrize("bias", [False, True])
def test_nvfp4_layout_same_bits_as_layout0(device, dtype, lay, bias):
    """A decode order in memory (1 pinned, 3 = "decode" for bf16, 2 = "decode" for fp16;
    docs/nvfp4_gemv.md 23, 29): every path gives layout 0's bits, x of the layer's dtype (the GEMVs
    and the decoding GEMM read the layout), of the other 16-bit dtype and fp32 (a converted copy),
    decode and prefill M, except where layout 3 runs nvfp4_gemv (other partial sums: the op's bits
    on the layer's buffer, within the bound); the buffer differs, state_dict not."""
    lin = _linear(k=256, n=72, bias=bias, device=device).to(dtype)
    q0 = QuantLinear.from_float(lin, "nvfp4", nvfp4_layout=0)
    q1 = QuantLinear.from_float(lin, "nvfp4", nvfp4_layout=lay if lay == 1 else "decode")
    assert q1.nvfp4_layout == lay and f"nvfp4_layout={lay}" in repr(q1) and "nvfp4_layout" not in repr(q0)
    assert torch.equal(q1.weight_packed, F.relayout_nvfp4(q0.weight_packed.cpu(), lay).to(device))
    assert not torch.equal(q1.weight_packed, q0.weight_packed)
    for M in (1, 2, 4, 8, 16, 17, 33, 64, 65, 300):
        for dt in (torch.bfloat16, torch.float16, torch.float32):
            x = torch.randn(2, M, 256, device=device).to(dt)
            assert torch.equal(q1(x), _layout0_or_layout3_op(q1, q0, x)), (M, dt)
    x1 = torch.randn(1, 256, device=device, dtype=dtype)
    assert _layout3_gemv_runs(q1, x1) == (device == "cuda" and lay == 3 and torch.cuda.get_device_capability() >= (8, 0))
    sd0, sd1 = q0.state_dict(), q1.state_dict()
    assert sorted(sd0) == sorted(sd1) and all(torch.equal(sd0[k], sd1[k]) for k in sd0)
    assert torch.equal(q1.weight_packed, F.relayout_nvfp4(q0.weight_packed.cpu(), lay).to(device))  # untouched
    # a formats.md state_dict loads into either layout
    for layout, want in ((lay, q1.weight_packed), (0, q0.weight_packed)):
        fresh = QuantLinear(256, 72, bias, "nvfp4", dtype=dtype, nvfp4_layout=layout, device=device)
        fresh.load_state_dict(sd1)
        assert torch.equal(fresh.weight_packed, want)
    x = torch.randn(5, 256, device=device, dtype=dtype)
    y1 = q1(x)
    assert torch.equal(y1, _layout0_or_layout3_op(q1, q0, x))
    assert torch.equal(QuantLinear.from_nvfp4(sd0["weight_packed"], sd0["weight_scale"], sd0["weight_global_scale"],
                                              sd0.get("bias"), dtype=dtype, nvfp4_layout=lay)(x), y1)
    import copy
    assert torch.equal(copy.deepcopy(q1)(x), y1)


def test_nvfp4_layout_model_save_load_and_checks(tmp_path):
    pytest.importorskip("safetensors")
    import copy

    base = nn.Sequential(_linear(n=48, seed=1), nn.ReLU(), _linear(k=48, n=32, seed=2), _linear(k=32, n=16, seed=3))
    base[2].to(torch.float16)  # from_float keeps an fp16 weight's dtype: its decode order is layout 2
    base[3].to(torch.bfloat16)
    ref_model = quantize_model(copy.deepcopy(base), {"format": "nvfp4", "overrides": {"3": {"format": "int8"}}},
                               progress=False)
    model = quantize_model(copy.deepcopy(base), {"format": "nvfp4", "nvfp4_layout": "decode",
                                                 "overrides": {"3": {"format": "int8"}}}, progress=False)
    assert [model[i].nvfp4_layout for i in (0, 2, 3)] == [3, 2, 0] and model[3].format == "int8"
    only1 = quantize_model(copy.deepcopy(base), {"format": "nvfp4", "nvfp4_layout": 1}, progress=False)
    assert [only1[i].nvfp4_layout for i in (0, 2, 3)] == [1, 0, 1]  # 1 applies to the bf16 layers only
    x = torch.randn(3, 96, dtype=torch.bfloat16)
    y = model(x)
    assert torch.equal(y, ref_model(x))
    path = str(tmp_path / "m.safetensors")
    save_quantized(model, path)
    loaded = load_quantized(copy.deepcopy(base), path)
    from safetensors.torch import load_file
    assert torch.equal(load_file(path)["0.weight_packed"], ref_model[0].weight_packed)  # the file holds layout 0
    # ... and each layer comes back in the decode order it was saved with
    assert [loaded[i].nvfp4_layout for i in (0, 2, 3)] == [3, 2, 0]
    assert torch.equal(loaded[0].weight_packed, model[0].weight_packed)
    assert torch.equal(loaded(x), y)
    with pytest.raises(ValueError, match="nvfp4_layout=1"):
        QuantLinear(96, 8, True, "fp8_block", nvfp4_layout=1)
    with pytest.raises(ValueError, match="nvfp4_layout=1"):
        QuantLinear(96, 8, True, "nvfp4", dtype=torch.float16, nvfp4_layout=1)
    with pytest.raises(ValueError, match="nvfp4_layout=2"):
        QuantLinear(96, 8, True, "nvfp4", dtype=torch.bfloat16, nvfp4_layout=2)
    with pytest.raises(ValueError, match="nvfp4_layout=3"):
        QuantLinear(96, 8, True, "nvfp4", dtype=torch.float16, nvfp4_layout=3)
    with pytest.raises(ValueError, match="nvfp4_layout must be"):
        QuantLinear(96, 8, True, "nvfp4", nvfp4_layout=4)
    for bad in (True, 1.0, "l1"):
        with pytest.raises(ValueError, match="nvfp4_layout must be"):
            QuantLinear(96, 8, True, "nvfp4", nvfp4_layout=bad)
    with pytest.raises(TypeError, match="float16 or bfloat16 activations"):  # W4A16: no fp32 layer
        QuantLinear(96, 8, True, "nvfp4", dtype=torch.float32, nvfp4_layout="decode")
    assert QuantLinear(96, 8, True, "int8", nvfp4_layout="decode").nvfp4_layout == 0


@pytest.mark.parametrize("device", DEVICES)
def test_nvfp4_layout_auto_follows_device_and_dtype(tmp_path, device):
    """nvfp4_layout="auto" (the default): the formats.md packing in memory on the CPU (the CPU
    kernel reads it directly) and the layer dtype's decode order on an sm_80+ GPU, switched by
    .to(device) and by 16-bit casts; the outputs and the state_dict are those of a layer pinned to
    layout 0, and save_quantized records "auto", not the layout of the moment."""
    pytest.importorskip("safetensors")
    lin = _linear(k=256, n=72, seed=5).to(torch.bfloat16)
    q = QuantLinear.from_float(lin, "nvfp4")
    pinned = QuantLinear.from_float(lin, "nvfp4", nvfp4_layout=0).to(device)
    assert q.nvfp4_auto and not pinned.nvfp4_auto and q.nvfp4_layout == 0
    p0 = q.weight_packed.clone()
    assert torch.equal(p0, pinned.weight_packed.cpu())
    decodes = device == "cuda" and torch.cuda.get_device_capability()[0] >= 8
    q = q.to(device)
    for dt in (torch.bfloat16, torch.float16, torch.bfloat16):
        q, pinned = q.to(dt), pinned.to(dt)
        want = {torch.bfloat16: 3, torch.float16: 2}[dt] if decodes else 0
        assert q.nvfp4_layout == want and pinned.nvfp4_layout == 0 and q.dtype == dt
        assert torch.equal(q.weight_packed.cpu(), F.relayout_nvfp4(p0, want) if want else p0)
        assert torch.equal(q._packed_layout0().cpu(), p0)
        for M in (1, 5, 16, 33, 100):
            x = torch.randn(M, 256, device=device).to(dt)
            assert torch.equal(q(x), _layout0_or_layout3_op(q, pinned, x)), (dt, M)
        sd, sd0 = q.state_dict(), pinned.state_dict()
        assert sorted(sd) == sorted(sd0) and all(torch.equal(sd[k], sd0[k]) for k in sd)
    q = q.cpu()
    assert q.nvfp4_layout == 0 and torch.equal(q.weight_packed, p0)
    # save_quantized records "auto": the file loads on the CPU in layout 0 and moves like any layer
    model = nn.Sequential(q)
    path = str(tmp_path / "auto.safetensors")
    save_quantized(model, path)
    from safetensors import safe_open
    with safe_open(path, framework="pt") as f:
        assert f.metadata()["torchquant.0"].endswith("|auto")
    loaded = load_quantized(nn.Sequential(nn.Linear(256, 72, dtype=torch.bfloat16)), path, device=device)
    assert loaded[0].nvfp4_auto and loaded[0].nvfp4_layout == (3 if decodes else 0)
    assert torch.equal(loaded[0]._packed_layout0().cpu(), p0)
    # a layer built on the meta device holds layout 0 there and takes its device's layout on to_empty
    with torch.device("meta"):
        m = QuantLinear(256, 72, True, "nvfp4")
    assert m.nvfp4_layout == 0
    assert m.to_empty(device=device).nvfp4_layout == (3 if decodes else 0)
    with torch.device(device):  # the default device decides as `device=` does
        assert QuantLinear(256, 72, True, "nvfp4").nvfp4_layout == (3 if decodes else 0)


# ------------------------------------------------------------ static_weights --
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_static_weights_same_results_and_plumbing(device, fmt):
    """static_weights=True is a launch hint (sm_90 PDL): the same bits at every M, on every path;
    set by the constructor, from_float, quantize_model and set_static_weights; shown by repr; not in
    the state_dict; type-checked."""
    lin = _linear(k=128, n=48, device=device)
    base = QuantLinear.from_float(lin, fmt, block_size=32)
    q = QuantLinear.from_float(lin, fmt, block_size=32, static_weights=True)
    assert q.static_weights and not base.static_weights
    assert "static_weights=True" in repr(q) and "static_weights" not in repr(base)
    for M in (1, 3, 8, 16, 40, 80):
        x = torch.randn(M, 128, dtype=torch.bfloat16, device=device)
        assert torch.equal(q(x), base(x)), f"M={M}"
    assert list(q.state_dict()) == list(base.state_dict())
    assert all(torch.equal(a, b) for a, b in zip(q.state_dict().values(), base.state_dict().values()))
    q.static_weights = False
    assert not q.static_weights and "static_weights" not in repr(q)
    with pytest.raises(TypeError, match="static_weights must be a bool"):
        q.static_weights = 1
    with pytest.raises(TypeError, match="static_weights must be a bool"):
        QuantLinear(128, 48, format=fmt, static_weights="yes")
    # the flag survives device moves and casts, and a reload of the weights
    q.static_weights = True
    q2 = q.to(device).bfloat16()
    q2.load_state_dict(base.state_dict())
    assert q2.static_weights
    # deepcopy and pickling keep it (QuantLinear.__setstate__ fences the copies); a layer pickled
    # before the flag existed comes back with it off
    twin = copy.deepcopy(q2)
    assert twin.static_weights
    x = torch.randn(3, 128, dtype=torch.bfloat16, device=device)
    assert torch.equal(twin(x), base(x))
    buf = io.BytesIO()
    torch.save(q2, buf)
    buf.seek(0)
    assert torch.load(buf, weights_only=False).static_weights
    old = copy.copy(q2)
    del old.__dict__["_static_weights"]
    state = old.__getstate__()
    revived = QuantLinear.__new__(QuantLinear)
    revived.__setstate__(state)
    assert revived.static_weights is False

    model = nn.Sequential(_linear(k=128, n=64, device=device), nn.ReLU(), _linear(k=64, n=32, seed=1, device=device))
    quantize_model(model, {"format": fmt, "static_weights": True, "block_size": 32}, progress=False)
    assert [m.static_weights for m in model.modules() if isinstance(m, QuantLinear)] == [True, True]
    assert set_static_weights(model, False) == 2
    assert not any(m.static_weights for m in model.modules() if isinstance(m, QuantLinear))


# ------------------------------------------------ persistence edge cases (2026-12-05c) --
def test_state_dict_records_fp8_block_size():
    """fp8_block's block_size is the one setting the buffers' shapes cannot tell (128, 144 and 160
    give [N, 2] scales at K = 256): the state dict carries it (_extra_state) and a layer of another
    block size refuses it; state dicts written before it existed still load."""
    lin = _linear(k=256, n=32)
    with torch.no_grad():
        lin.weight[:, 128:] *= 100
    src = QuantLinear.from_float(lin, "fp8_block", block_size=128)
    sd = src.state_dict()
    assert sd["_extra_state"].tolist() == [1, 128]
    for bs in (144, 160):
        with pytest.raises(RuntimeError, match="saved with block_size 128, this layer has block_size"):
            QuantLinear(256, 32, True, "fp8_block", block_size=bs).load_state_dict(sd)
    legacy = {k: v for k, v in sd.items() if k != "_extra_state"}
    dst = QuantLinear(256, 32, True, "fp8_block", block_size=128)
    dst.load_state_dict(legacy)
    x = torch.randn(3, 256, dtype=torch.bfloat16)
    assert torch.equal(dst(x), src(x))


def test_load_state_dict_derives_missing_colsum_and_converts_on_assign():
    lin = _linear(k=96, n=40)
    q = QuantLinear.from_float(lin, "int8", act_symmetric=False)
    x = torch.randn(4, 96, dtype=torch.bfloat16)
    want = q(x)
    # strict=False without the column sums: derived from the weight, not left at zero
    sd = {k: v for k, v in q.state_dict().items() if k != "weight_colsum"}
    r = QuantLinear(96, 40, True, "int8", act_symmetric=False)
    assert r.load_state_dict(sd, strict=False).missing_keys == ["weight_colsum"]
    assert torch.equal(r(x), want)
    # assign=True takes the tensors themselves: converted to the buffers' dtypes and made dense
    sd = dict(q.state_dict())
    sd["weight_scale"] = sd["weight_scale"].to(torch.float64)
    sd["weight_colsum"] = sd["weight_colsum"].to(torch.int64)
    sd["weight_q"] = sd["weight_q"].t().contiguous().t()
    a = QuantLinear(96, 40, True, "int8", act_symmetric=False)
    a.load_state_dict(sd, assign=True)
    assert a.weight_scale.dtype == torch.float32 and a.weight_colsum.dtype == torch.int32
    assert a.weight_q.is_contiguous() and torch.equal(a(x), want)


def test_load_quantized_rebuilds_other_configs_and_checks_metadata(tmp_path):
    from safetensors import safe_open
    from safetensors.torch import save_file

    def make():
        torch.manual_seed(3)
        return nn.Sequential(nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 32))

    src = quantize_model(make(), {"format": "fp8_block", "block_size": 128,
                                  "overrides": {"2": {"format": "int8", "act_symmetric": False}}}, progress=False)
    x = torch.randn(3, 256, dtype=torch.bfloat16)
    want = src(x)
    path = str(tmp_path / "m.safetensors")
    save_quantized(src, path)
    # into a model quantized otherwise: each layer rebuilt to the file's configuration
    other = quantize_model(make(), {"format": "fp8_block", "block_size": 64}, progress=False)
    load_quantized(other, path)
    assert other[0].block_size == 128 and other[2].format == "int8" and not other[2].act_symmetric
    assert torch.equal(other(x), want)
    # into a model built on the meta device
    with torch.device("meta"):
        on_meta = make()
    load_quantized(on_meta, path)
    assert torch.equal(on_meta(x), want)
    # tampered metadata: an error that names the entry
    with safe_open(path, framework="pt") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}
        meta = f.metadata()
    for field, value, msg in ((0, "int4", "format must be one of"), (1, "abc", "block_size must be"),
                              (2, "True", "act_symmetric must be 0 or 1"), (3, "bogus", "not a torch float dtype"),
                              (5, "decode", "nvfp4_layout must be")):
        bad = dict(meta)
        parts = bad["torchquant.0"].split("|")
        parts[field] = value
        bad["torchquant.0"] = "|".join(parts)
        p = str(tmp_path / f"bad{field}.safetensors")
        save_file(tensors, p, metadata=bad)
        with pytest.raises(ValueError, match=rf"metadata 'torchquant.0' = .*{msg}"):
            load_quantized(make(), p)
    for tail, msg in (("|2", "fp8_tiled must be 0 or 1"), ("|1|1", "expected format\\|block_size")):
        p = str(tmp_path / "long.safetensors")  # the seventh field (fp8_tiled), bad / an eighth
        save_file(tensors, p, metadata={**meta, "torchquant.0": meta["torchquant.0"] + tail})
        with pytest.raises(ValueError, match=rf"metadata 'torchquant.0' = .*{msg}"):
            load_quantized(make(), p)
    p = str(tmp_path / "short.safetensors")
    save_file(tensors, p, metadata={**meta, "torchquant.0": "fp8_block|128|1"})
    with pytest.raises(ValueError, match="expected format\\|block_size"):
        load_quantized(make(), p)
    p = str(tmp_path / "extra.safetensors")
    save_file(tensors, p, metadata={**meta, "torchquant.zz": meta["torchquant.0"]})
    with pytest.raises(ValueError, match="records layer 'zz'"):
        load_quantized(make(), p)
    # a file of one QuantLinear
    p = str(tmp_path / "one.safetensors")
    save_quantized(quantize_model(nn.Sequential(nn.Linear(256, 64)), "int8", progress=False)[0], p)
    with pytest.raises(ValueError, match="holds a single QuantLinear"):
        load_quantized(nn.Linear(256, 64), p)
    # load_prequantized recognizes torchquant's own state dicts (its nvfp4 global scale is not
    # compressed-tensors' reciprocal)
    nv = quantize_model(make(), "nvfp4", progress=False)
    with pytest.raises(ValueError, match="marks a torchquant state dict"):
        load_prequantized(make(), nv.state_dict())
    legacy = {k: v for k, v in nv.state_dict().items() if not k.endswith("_extra_state")}
    with pytest.raises(ValueError, match="weight_global_scale' marks a torchquant state dict"):
        load_prequantized(make(), legacy)


def test_quantize_model_shared_modules_and_tied_weights(tmp_path):
    """A Linear registered under two names is quantized once and both names get that layer; the
    model itself being a Linear raises; a float lm_head tied to the embedding saves and loads."""
    lin = _linear(k=96, n=96)
    model = nn.Sequential()
    model.add_module("a", lin)
    model.add_module("b", lin)
    quantize_model(model, "int8", progress=False)
    assert isinstance(model.a, QuantLinear) and model.a is model.b
    x = torch.randn(2, 96)
    path = str(tmp_path / "shared.safetensors")
    save_quantized(model, path)
    fresh = nn.Sequential()
    lin2 = _linear(k=96, n=96, seed=9)
    fresh.add_module("a", lin2)
    fresh.add_module("b", lin2)
    load_quantized(fresh, path)
    assert fresh.a is fresh.b and torch.equal(fresh(x), model(x))
    shared = nn.ModuleList([lin, lin])
    quantize_model(shared, {"format": "int8", "skip": ["1"]}, progress=False)  # one name skipped: both float
    assert isinstance(shared[0], nn.Linear) and shared[0] is shared[1]
    with pytest.raises(ValueError, match="the model is itself an nn.Linear"):
        quantize_model(_linear(), "int8")

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(50, 64)
            self.mid = nn.Linear(64, 64)
            self.lm_head = nn.Linear(64, 50, bias=False)
            self.lm_head.weight = self.emb.weight

        def forward(self, ids):
            return self.lm_head(self.mid(self.emb(ids).to(torch.bfloat16)).float())

    torch.manual_seed(5)
    tied = quantize_model(Tied(), {"format": "int8", "skip": ["lm_head"]}, progress=False)
    ids = torch.tensor([[1, 2, 3]])
    want = tied(ids)
    path = str(tmp_path / "tied.safetensors")
    save_quantized(tied, path)
    fresh = Tied()
    load_quantized(fresh, path)
    assert fresh.lm_head.weight is fresh.emb.weight and torch.equal(fresh(ids), want)
