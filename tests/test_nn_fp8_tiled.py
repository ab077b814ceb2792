"""QuantLinear(format="fp8_block", fp8_tiled=True): the weight and its block scales kept in memory
per 16-row tile (fp8_block_tile), read by the decode GEMVs' tiled forms; every other path untiles a
copy. The layer must give the row-major layer's results (bit for bit wherever the same kernel runs
on the same bytes; within the float64 fp32-accumulation bound where auto picks another decode
kernel on the GPU), save and load the row-major tensors, and refuse what it cannot hold."""

import copy
import io
import warnings

import pytest
import torch
from torch import nn

import torchquant  # noqa: F401
from torchquant import reference as ref
from torchquant.nn import QuantLinear, load_quantized, quantize_model, save_quantized

from conftest import HAS_CUDA

DEVICES = ["cpu"] + (["cuda"] if HAS_CUDA else [])
OPS = torch.ops.torchquant


def _pair(n=48, k=320, bs=64, bias=True, dtype=torch.bfloat16, device="cpu", seed=3):
    """(row-major layer, tiled layer) from one nn.Linear."""
    g = torch.Generator().manual_seed(seed)
    lin = nn.Linear(k, n, bias=bias)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(n, k, generator=g) * 0.05)
        if bias:
            lin.bias.copy_(torch.randn(n, generator=g))
    lin = lin.to(device)
    rows = QuantLinear.from_float(lin, "fp8_block", block_size=bs, dtype=dtype)
    tiled = QuantLinear.from_float(lin, "fp8_block", block_size=bs, dtype=dtype, fp8_tiled=True)
    return rows, tiled


def test_buffers_are_the_tiled_rows():
    """The tiled layer's buffers are fp8_block_tile of the row-major layer's, same shapes and dtypes."""
    rows, tiled = _pair()
    tq, ts = OPS.fp8_block_tile(rows.weight_q, rows.weight_scale)
    assert tiled.weight_q.shape == rows.weight_q.shape and tiled.weight_q.dtype == rows.weight_q.dtype
    assert torch.equal(tiled.weight_q.view(torch.uint8), tq.view(torch.uint8))
    assert torch.equal(tiled.weight_scale, ts)
    assert not torch.equal(tiled.weight_q.view(torch.uint8), rows.weight_q.view(torch.uint8))  # really tiled
    assert "fp8_tiled=True" in repr(tiled) and "fp8_tiled" not in repr(rows)


@pytest.mark.parametrize("bs", [64, 128, 192])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_cpu_same_bits_every_m(bs, dtype):
    """On the CPU every M gives the row-major layer's bits: the GEMV untiles and runs the same sums
    (M <= 127), dequantize + fp32 GEMM reads the untiled copy (M >= 128); fp32 x too."""
    rows, tiled = _pair(bs=bs, dtype=dtype, seed=bs)
    g = torch.Generator().manual_seed(7)
    for m in (1, 2, 7, 16, 17, 64, 65, 130):
        for xd in (dtype, torch.float32):
            x = torch.randn(m, rows.in_features, generator=g).to(xd)
            assert torch.equal(tiled(x), rows(x)), (bs, dtype, m, xd)
    x3 = torch.randn(2, 3, rows.in_features, generator=g).to(dtype)
    assert torch.equal(tiled(x3), rows(x3))
    assert torch.equal(tiled.dequantized_weight(torch.float32), rows.dequantized_weight(torch.float32))


def test_state_dict_is_row_major_and_loads_both_ways():
    """state_dict holds the row-major tensors (the row-major layer's state dict, key for key); a
    row-major state dict loads into a tiled layer (tiled on the way in) and the tiled layer's into
    a row-major one; assign=True too; torch.save round trip; deepcopy."""
    rows, tiled = _pair(bias=True)
    sd_rows, sd_tiled = rows.state_dict(), tiled.state_dict()
    assert sd_rows.keys() == sd_tiled.keys()
    for k in sd_rows:
        a, b = sd_rows[k], sd_tiled[k]
        assert a.dtype == b.dtype and torch.equal(a.view(torch.uint8) if a.dtype.itemsize == 1 else a,
                                                  b.view(torch.uint8) if b.dtype.itemsize == 1 else b), k
    x = torch.randn(3, rows.in_features).bfloat16()
    fresh = QuantLinear(rows.in_features, rows.out_features, True, "fp8_block", block_size=64, fp8_tiled=True)
    fresh.load_state_dict(sd_rows)
    assert torch.equal(fresh.weight_q.view(torch.uint8), tiled.weight_q.view(torch.uint8))
    assert torch.equal(fresh(x), rows(x))
    back = QuantLinear(rows.in_features, rows.out_features, True, "fp8_block", block_size=64)
    back.load_state_dict(sd_tiled)
    assert torch.equal(back.weight_q.view(torch.uint8), rows.weight_q.view(torch.uint8))
    assigned = QuantLinear(rows.in_features, rows.out_features, True, "fp8_block", block_size=64, fp8_tiled=True)
    assigned.load_state_dict(rows.state_dict(), assign=True)
    assert torch.equal(assigned.weight_scale, tiled.weight_scale) and torch.equal(assigned(x), rows(x))
    buf = io.BytesIO()
    torch.save(tiled.state_dict(), buf)
    buf.seek(0)
    again = QuantLinear(rows.in_features, rows.out_features, True, "fp8_block", block_size=64, fp8_tiled=True)
    again.load_state_dict(torch.load(buf))
    assert torch.equal(again(x), rows(x))
    dup = copy.deepcopy(tiled)
    assert dup.fp8_tiled and torch.equal(dup(x), rows(x)) and torch.equal(dup.state_dict()["weight_q"].view(torch.uint8),
                                                                         sd_rows["weight_q"].view(torch.uint8))


def test_from_fp8_block_and_dtype_casts():
    """from_fp8_block takes row-major tensors (checked as given) and tiles them; .half() keeps the
    stored order and dtypes, and the results follow the row-major layer's."""
    rows, _ = _pair(bias=False)
    t = QuantLinear.from_fp8_block(rows.weight_q, rows.weight_scale, 64, fp8_tiled=True)
    x = torch.randn(5, rows.in_features).bfloat16()
    assert torch.equal(t(x), rows(x))
    with pytest.raises(ValueError, match="weight_scale must have shape"):
        QuantLinear.from_fp8_block(rows.weight_q, rows.weight_scale[:, :1], 64, fp8_tiled=True)
    h, hr = copy.deepcopy(t).half(), copy.deepcopy(rows).half()
    assert h.weight_q.dtype == torch.float8_e4m3fn and h.fp8_tiled
    xh = x.half()
    assert torch.equal(h(xh), hr(xh))


def test_refusals():
    """fp8_tiled=True outside what the tiled order holds raises naming the condition."""
    with pytest.raises(ValueError, match="out_features % 16 == 0, in_features % 64 == 0 and block_size % 64 == 0"):
        QuantLinear(320, 40, format="fp8_block", block_size=64, fp8_tiled=True)
    with pytest.raises(ValueError, match="block_size % 64 == 0"):
        QuantLinear(320, 48, format="fp8_block", block_size=32, fp8_tiled=True)
    with pytest.raises(ValueError, match="in_features % 64 == 0"):
        QuantLinear(336, 48, format="fp8_block", block_size=64, fp8_tiled=True)
    with pytest.raises(ValueError, match="prefill='w8a8'"):
        QuantLinear(256, 48, format="fp8_block", prefill="w8a8", fp8_tiled=True)
    with pytest.raises(ValueError, match="is for format 'fp8_block'"):
        QuantLinear(256, 48, format="nvfp4", fp8_tiled=True)
    with pytest.raises(TypeError, match="fp8_tiled must be a bool"):
        QuantLinear(256, 48, format="fp8_block", fp8_tiled=1)


def test_quantize_model_option():
    """quantize_model(..., fp8_tiled=True): the fp8_block layers that can hold it are tiled, one
    that cannot keeps rows with a warning, other formats ignore it silently."""
    m = nn.Sequential(nn.Linear(256, 64), nn.Linear(64, 48), nn.Linear(48, 32))  # layer 2: K = 48
    x = torch.randn(3, 256)
    want = quantize_model(copy.deepcopy(m), {"format": "fp8_block", "overrides": {"1": "nvfp4"}}, progress=False)
    with pytest.warns(UserWarning, match=r"2 \(fp8_block, 32x48\) cannot take fp8_tiled=True"):
        got = quantize_model(copy.deepcopy(m), {"format": "fp8_block", "fp8_tiled": True, "overrides": {"1": "nvfp4"}},
                             progress=False)
    assert got[0].fp8_tiled and not got[1].fp8_tiled and not got[2].fp8_tiled
    assert got[1].format == "nvfp4" and got[2].format == "fp8_block"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch.equal(got(x), want(x))


def test_save_load_quantized(tmp_path):
    """save_quantized records fp8_tiled layers (a seventh metadata field, 1, on those only: other
    layers' entries keep six fields) and load_quantized rebuilds them tiled, into the float model
    or over a row-major quantized one; the file's tensors are rows either way."""
    pytest.importorskip("safetensors")
    from safetensors import safe_open

    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(256, 64), nn.Linear(64, 48), nn.Linear(48, 32))
    x = torch.randn(3, 256)
    with pytest.warns(UserWarning, match="cannot take fp8_tiled=True"):  # layer 2: K = 48
        q = quantize_model(copy.deepcopy(m), {"format": "fp8_block", "fp8_tiled": True, "overrides": {"1": "int8"}},
                           progress=False)
    path = str(tmp_path / "q.safetensors")
    save_quantized(q, path)
    with safe_open(path, framework="pt") as f:
        meta = f.metadata()
        w0 = f.get_tensor("0.weight_q")
    assert meta["torchquant.0"].split("|")[6:] == ["1"]
    assert len(meta["torchquant.1"].split("|")) == 6 and len(meta["torchquant.2"].split("|")) == 6
    rows = quantize_model(copy.deepcopy(m), {"format": "fp8_block", "overrides": {"1": "int8"}}, progress=False)
    assert torch.equal(w0.view(torch.uint8), rows[0].weight_q.view(torch.uint8))
    for target in (copy.deepcopy(m), rows):
        got = load_quantized(target, path)
        assert got[0].fp8_tiled and got[1].format == "int8" and got[2].format == "fp8_block" and not got[2].fp8_tiled
        assert torch.equal(got[0].weight_q.view(torch.uint8), q[0].weight_q.view(torch.uint8))
        assert torch.equal(got(x), q(x))


@pytest.mark.skipif(not HAS_CUDA, reason="needs a GPU")
def test_cuda_paths_match_rows():
    """On the GPU: decode M (the tiled GEMVs, auto's choice) within the float64 bound of the
    dequantized weight, and the row-major layer's bits wherever both run the same kernel on the
    same bytes (M > 64: dequantize + cuBLAS on the untiled copy, or on sm_90 from M = 17 the
    dequantizing GEMM, which reads the tiled weight in place); graph capture of a decode call."""
    from torchquant.nn.dispatch import fp8_wgmma_runs
    rows, tiled = _pair(n=512, k=1024, bs=128, device="cuda", seed=11)
    g = torch.Generator(device="cuda").manual_seed(5)
    wd = rows.dequantized_weight(torch.float64)
    b = rows.bias
    for m in (1, 3, 8, 9, 16, 17, 33, 64):
        x = torch.randn(m, rows.in_features, device="cuda", generator=g).bfloat16()
        y = tiled(x)
        frac = ref.worst_fraction(y, ref.linear_ref(x, wd, b), ref.fp32_accum_bound(x, wd, b, x.dtype))
        assert frac <= 1.0, (m, frac)
    same = (17, 33, 64, 65, 200) if fp8_wgmma_runs(torch.device("cuda")) else (65, 200)
    for m in same:
        x = torch.randn(m, rows.in_features, device="cuda", generator=g).bfloat16()
        assert torch.equal(tiled(x), rows(x)), m
    x = torch.randn(4, rows.in_features, device="cuda", generator=g).bfloat16()
    want = tiled(x)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tiled(x)
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, want)


def test_compile_fullgraph():
    """torch.compile(fullgraph=True) traces the tiled layer without a graph break on its decode
    path (the GEMV on the tiled buffers) and its dequantize path (the untile op, then the
    dequantize op), with the eager bits."""
    torch._dynamo.reset()
    _, tiled = _pair(seed=21)
    compiled = torch.compile(tiled, fullgraph=True, backend="aot_eager")
    for m in (4, 130):
        x = torch.randn(m, tiled.in_features).bfloat16()
        assert torch.equal(compiled(x), tiled(x)), m
