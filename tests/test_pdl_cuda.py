"""Programmatic dependent launch of the decode kernels (csrc/common/pdl.h): TORCHQUANT_PDL=1
launches the fp8_block ring GEMV, the nvfp4 mma GEMV, the int8 GEMV and its activation
quantization and the two 2:4 CUDA-core GEMVs so that each may start while the kernel before it
is still running, then waits for it before loading anything; "smem" lets the fp8 / nvfp4 ring
kernels copy their first weight stages before that wait (weights written long before);
unset: each kernel's default; "0": never.
The tests make every kernel depend on the one right before it:
- a chain of 4096 x 4096 QuantLinear layers (each one's output is the next one's input)
  behind a slow reduction that writes the first input over a NaN-filled buffer;
- (modes that load nothing before the wait) layers whose weight buffers are filled with
  garbage and rewritten by a copy kernel right before each call.
- (sm_90 with torchquant._C_sm90a) chains of the two Hopper decode GEMVs (fp8_block_gemv and
  nvfp4_gemv path "wgmma", PdlKernel::kHopperGemv), with and without a split-K reduction,
  under TORCHQUANT_PDL=1 and under TORCHQUANT_PDL_HOPPER_GEMV=1 (that kind alone).
Every run must give the bits of the same work without PDL (the arithmetic does not change),
eagerly and replayed from a CUDA graph. On a GPU below compute capability 9.0 the variable
is ignored and the tests check just that.
"""

import copy

import pytest
import torch

import torchquant  # noqa: F401
from conftest import graph_replay_matches_eager, poison_cuda, requires_cuda, requires_sm90a

N = K = 4096
DEPTH = 4
FORMATS = ["fp8_block", "nvfp4", "int8", "sparse24", "int8_sparse24"]
# TORCHQUANT_PDL values; None: unset (the defaults). "smem"'s precondition holds in the chain
# test: the weights are written long before the chain runs.
MODES = [None, "1", "smem"]


def _layers(fmt, seed, depth=DEPTH):
    from torchquant.nn import QuantLinear

    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(depth):
        lin = torch.nn.Linear(K, N, bias=True, dtype=torch.bfloat16)
        with torch.no_grad():  # keeps |y| ~ |x| along the chain
            lin.weight.copy_(torch.randn(N, K, generator=g) / K ** 0.5)
            lin.bias.copy_(torch.randn(N, generator=g) * 0.1)
        out.append(QuantLinear.from_float(lin, format=fmt).cuda())
    torch.cuda.synchronize()
    return out


def _chain(layers, big, xbuf):
    """A slow producer writes x (over NaN), then each layer reads the previous output."""
    xbuf.fill_(float("nan"))
    torch.sum(big, dim=0, out=xbuf)
    ys = []
    x = xbuf
    for q in layers:
        x = q(x)
        ys.append(x)
    return ys


PDL_VARS = ("TORCHQUANT_PDL", "TORCHQUANT_PDL_HOPPER_GEMV")


def _set_env(monkeypatch, setting):
    """Every PDL variable unset, then those of `setting` (a dict; a None value stays unset)."""
    for var in PDL_VARS:
        monkeypatch.delenv(var, raising=False)
    for var, value in setting.items():
        if value is not None:
            monkeypatch.setenv(var, value)


def _check_chain_settings(monkeypatch, layers, M, n, seed, settings, what):
    """The chain behind a slow producer with TORCHQUANT_PDL=0 is the reference. Under each
    setting it must give the same bits, twice over poisoned memory; captured with
    TORCHQUANT_PDL=1 (programmatic edges in the graph) and replayed over NaN, the eager bits."""
    g = torch.Generator().manual_seed(seed)
    big = torch.randn(512, M, n, generator=g).to(torch.bfloat16).cuda()  # the producer's input
    xbuf = torch.empty(M, n, dtype=torch.bfloat16, device="cuda")
    _set_env(monkeypatch, {"TORCHQUANT_PDL": "0"})
    want = [y.clone() for y in _chain(layers, big, xbuf)]
    torch.cuda.synchronize()
    assert all(torch.isfinite(y.float()).all() for y in want)

    for setting in settings:
        _set_env(monkeypatch, setting)
        for _ in range(2):
            poison_cuda()
            got = _chain(layers, big, xbuf)
            torch.cuda.synchronize()
            for i, (a, b) in enumerate(zip(got, want)):
                assert torch.equal(a, b), f"{what} {setting} layer {i}"

    _set_env(monkeypatch, {"TORCHQUANT_PDL": "1"})
    graph_replay_matches_eager(lambda: tuple(_chain(layers, big, xbuf)), replays=3, poison=True)
    got = _chain(layers, big, xbuf)
    assert all(torch.equal(a, b) for a, b in zip(got, want))


@requires_cuda
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("M", [1, 2, 8, 16])
def test_pdl_chain_matches_serial(monkeypatch, fmt, M):
    _check_chain_settings(monkeypatch, _layers(fmt, seed=M), M, K, 100 + M,
                          [{"TORCHQUANT_PDL": mode} for mode in MODES], f"{fmt} M={M}")


def _garbage_(b):
    if b.dtype.is_floating_point:
        b.fill_(float("nan"))
    elif b.dtype == torch.uint8:
        b.fill_(0xFF)
    else:
        b.fill_(-1)


@requires_cuda
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("M", [1, 8])
@pytest.mark.parametrize("mode", [None, "1"])
def test_pdl_weight_written_just_before(monkeypatch, fmt, M, mode):
    """The layer's weight, scales (and bias) are overwritten with garbage and then copied back
    by copy kernels right before each call, in both orders, so the kernel just before the
    GEMV wrote its weight: with PDL ("1") or the defaults the output is the bits without it."""
    (q,) = _layers(fmt, seed=7 + M, depth=1)
    saved = [b.clone() for b in q.buffers()]
    x = torch.randn(M, K, dtype=torch.bfloat16, device="cuda")
    monkeypatch.setenv("TORCHQUANT_PDL", "0")
    want = q(x)
    torch.cuda.synchronize()
    _set_env(monkeypatch, {"TORCHQUANT_PDL": mode})
    for order in (1, -1, 1, -1):
        bufs = list(zip(q.buffers(), saved))[::order]
        for b, _ in bufs:
            _garbage_(b)
        for b, s in bufs:
            b.copy_(s)
        got = q(x)
        for b, _ in bufs:  # the next round's garbage lands right after the GEMV
            _garbage_(b)
        torch.cuda.synchronize()
        assert torch.equal(got, want), f"{fmt} M={M} order={order}"
        for b, s in bufs:
            b.copy_(s)


@requires_cuda
def test_pdl_off_below_sm90_or_on(monkeypatch):
    """The mode only changes how kernels are launched: QuantLinear fp8_block / nvfp4 at M = 1
    give the same bits with TORCHQUANT_PDL unset, 0, 1 and smem on any GPU."""
    x = torch.randn(1, K, dtype=torch.bfloat16, device="cuda")
    for fmt in ("fp8_block", "nvfp4"):
        (q,) = _layers(fmt, seed=3, depth=1)
        outs = []
        for v in (None, "0", "1", "smem"):
            _set_env(monkeypatch, {"TORCHQUANT_PDL": v})
            poison_cuda()
            outs.append(q(x * 2))  # x * 2: the kernel right before the layer writes its input
        torch.cuda.synchronize()
        assert all(torch.equal(o, outs[0]) for o in outs[1:])


def _hopper_gemv_layers(fmt, n, seed, depth=3, static=False):
    """depth square n x n layers for the op's wgmma path: a closure per layer, x -> y (static:
    with static_weight=True)."""
    ops = torch.ops.torchquant
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(depth):
        w = torch.randn(n, n, generator=g) / n ** 0.5
        b = (torch.randn(n, generator=g) * 0.1).to(torch.bfloat16).cuda()
        if fmt == "fp8_block":
            wq, ws = (t.cuda() for t in ops.quantize_fp8_block(w, 128))
            out.append(lambda x, wq=wq, ws=ws, b=b: ops.fp8_block_gemv(x, wq, ws, 128, b, "wgmma", static))
        else:
            wp, ws, gs = (t.cuda() for t in ops.quantize_nvfp4(w))
            out.append(lambda x, wp=wp, ws=ws, gs=gs, b=b: ops.nvfp4_gemv(x, wp, ws, gs, b, "wgmma", 0, static))
    torch.cuda.synchronize()
    return out


@requires_sm90a("_fp8_block_gemv_sm90a", "_nvfp4_gemv_sm90a")
@pytest.mark.parametrize("fmt", ["fp8_block", "nvfp4"])
# 4096: 32 feature tiles, one launch; 1024: 8 tiles, split over K (the reduction kernel follows)
@pytest.mark.parametrize("n", [4096, 1024])
@pytest.mark.parametrize("M", [1, 8, 16])
def test_pdl_hopper_gemv_chain(monkeypatch, fmt, n, M):
    layers = _hopper_gemv_layers(fmt, n, seed=11 + M + n)
    settings = [{"TORCHQUANT_PDL": "1"}, {"TORCHQUANT_PDL_HOPPER_GEMV": "1"},
                {"TORCHQUANT_PDL_HOPPER_GEMV": "0"}]
    _check_chain_settings(monkeypatch, layers, M, n, 200 + M, settings, f"{fmt} n={n} M={M}")


# ------------------------------------------------------------ static_weights --
# QuantLinear(static_weights=True) / the ops' static_weight=True: the per-call form of "smem" (the
# fp8_block ring and nvfp4 mma GEMVs copy their first weight stages before the PDL wait, the int8
# GEMV issues its first round of weight loads), for weights not written by a kernel that may
# still be running.
STATIC_FORMATS = ["fp8_block", "nvfp4", "int8", "int8_sparse24"]


def _static_layers(fmt, seed, depth=DEPTH):
    layers = _layers(fmt, seed, depth)
    for q in layers:
        q.static_weights = True
    return layers


@requires_cuda
@pytest.mark.parametrize("fmt", STATIC_FORMATS)
@pytest.mark.parametrize("M", [1, 2, 8, 16])
def test_pdl_chain_static_weights(monkeypatch, fmt, M):
    """The chain of static_weights layers behind a slow producer: the bits without PDL under the
    defaults and "1" (where the flag takes effect), eagerly and from a CUDA graph."""
    _check_chain_settings(monkeypatch, _static_layers(fmt, seed=30 + M), M, K, 300 + M,
                          [{"TORCHQUANT_PDL": mode} for mode in (None, "1")], f"{fmt} static M={M}")


@requires_cuda
@pytest.mark.parametrize("fmt", STATIC_FORMATS)
@pytest.mark.parametrize("M", [1, 8])
@pytest.mark.parametrize("mode", [None, "1"])
def test_pdl_static_weights_after_the_layers_own_writes(monkeypatch, fmt, M, mode):
    """The writes a static_weights layer makes itself are fenced before its next GEMV: garbage
    and then the real weights loaded by load_state_dict right before each call, a layer built by
    from_float right before its first call, and a layer moved off and back on the GPU right before
    the call all give the bits of the layer without PDL."""
    from torchquant.nn import QuantLinear

    (q,) = _static_layers(fmt, seed=40 + M, depth=1)
    sd = {k: v.clone() for k, v in q.state_dict().items()}
    bad = {k: v.clone() for k, v in sd.items()}
    for k, v in bad.items():
        if not k.endswith("_extra_state"):  # the format record, not a kernel operand
            _garbage_(v)
    x = torch.randn(M, K, dtype=torch.bfloat16, device="cuda")
    monkeypatch.setenv("TORCHQUANT_PDL", "0")
    want = q(x)
    torch.cuda.synchronize()
    _set_env(monkeypatch, {"TORCHQUANT_PDL": mode})
    for _ in range(3):
        q.load_state_dict(bad)
        q.load_state_dict(sd)
        got = q(x)
        torch.cuda.synchronize()
        assert torch.equal(got, want), f"{fmt} M={M} after load_state_dict"
    g = torch.Generator().manual_seed(40 + M)
    lin = torch.nn.Linear(K, N, bias=True, dtype=torch.bfloat16)
    with torch.no_grad():  # _layers' first layer, built on the GPU this time
        lin.weight.copy_(torch.randn(N, K, generator=g) / K ** 0.5)
        lin.bias.copy_(torch.randn(N, generator=g) * 0.1)
    lin = lin.cuda()
    for _ in range(3):
        fresh = QuantLinear.from_float(lin, format=fmt, static_weights=True)
        got = fresh(x)
        torch.cuda.synchronize()
        assert torch.equal(got, want), f"{fmt} M={M} right after from_float"
    for _ in range(2):
        q.cpu()
        q.cuda()
        got = q(x)
        torch.cuda.synchronize()
        assert torch.equal(got, want), f"{fmt} M={M} after .cpu().cuda()"
    for _ in range(2):  # copy.deepcopy rebuilds the buffers by copies (QuantLinear.__setstate__)
        twin = copy.deepcopy(q)
        assert twin.static_weights
        got = twin(x)
        torch.cuda.synchronize()
        assert torch.equal(got, want), f"{fmt} M={M} right after deepcopy"


@requires_cuda
def test_pdl_build_has_the_wait():
    """Every decode kernel of this build carries griddepcontrol (its code is for sm_90+), so no
    launch falls back from PDL: pdl.h's kernel_has_pdl_wait would print its one-time warning (a
    C++ warning, on stderr: hence a fresh process) if one did."""
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("PDL needs sm_90")
    import os
    import subprocess
    import sys

    script = (
        "import torch, torchquant\n"
        "from torchquant.nn import QuantLinear\n"
        "for fmt in ('int8', 'fp8_block', 'nvfp4', 'int8_sparse24'):\n"
        "    lin = torch.nn.Linear(4096, 4096, dtype=torch.bfloat16).cuda()\n"
        "    q = QuantLinear.from_float(lin, format=fmt, static_weights=fmt in ('fp8_block', 'nvfp4'))\n"
        "    for M in (1, 8):\n"
        "        q(torch.randn(M, 4096, dtype=torch.bfloat16, device='cuda'))\n"
        "torch.cuda.synchronize()\n"
        "print('done')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TORCHQUANT_PDL"}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300,
                       cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert r.returncode == 0 and "done" in r.stdout, r.stderr[-2000:]
    assert "programmatic dependent launch is off" not in r.stderr, r.stderr[-2000:]


@requires_cuda
@pytest.mark.parametrize("fmt", ["fp8_block", "nvfp4"])  # the ops that copy an unaligned weight
@pytest.mark.parametrize("mode", [None, "1", "smem"])
@pytest.mark.parametrize("path", ["auto", "wgmma"])
def test_pdl_static_weight_unaligned_view_is_copied_first(monkeypatch, fmt, mode, path):
    """A weight view the op must copy for alignment (a contiguous view one byte into its storage)
    is written by that copy just before the GEMV: the ops drop static_weight (and "smem") for it.
    The view's bytes are overwritten with garbage and rewritten right before each call. Path
    "auto" runs the ring / mma GEMV at M = 1, "wgmma" the Hopper GEMV (sm_90a module only)."""
    ops = torch.ops.torchquant
    if path == "wgmma" and not hasattr(ops, f"_{fmt}_gemv_sm90a"):
        pytest.skip("needs torchquant._C_sm90a")
    if path == "wgmma" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the wgmma path runs on compute capability 9.0")
    g = torch.Generator().manual_seed(5)
    w = torch.randn(N, K, generator=g) / K ** 0.5
    x = torch.randn(1, K, generator=g).to(torch.bfloat16).cuda()
    if fmt == "fp8_block":
        wq, ws = (t.cuda() for t in ops.quantize_fp8_block(w, 128))
        raw = wq.view(torch.uint8)
        run = lambda wv, s: ops.fp8_block_gemv(x, wv, ws, 128, None, path, s)  # noqa: E731
        as_w = lambda b: b.view(torch.float8_e4m3fn)  # noqa: E731
    else:
        wp, ws, gs = (t.cuda() for t in ops.quantize_nvfp4(w))
        raw = wp
        run = lambda wv, s: ops.nvfp4_gemv(x, wv, ws, gs, None, path, 0, s)  # noqa: E731
        as_w = lambda b: b  # noqa: E731
    buf = torch.empty(raw.numel() + 1, dtype=torch.uint8, device="cuda")
    view = buf[1:].view(raw.shape)
    view.copy_(raw)
    monkeypatch.setenv("TORCHQUANT_PDL", "0")
    want = run(as_w(raw), False)
    assert torch.equal(run(as_w(view), False), want)
    _set_env(monkeypatch, {"TORCHQUANT_PDL": mode, "TORCHQUANT_PDL_HOPPER_GEMV": "1" if mode is None else None})
    for _ in range(4):
        view.fill_(0xFF)
        view.copy_(raw)
        got = run(as_w(view), True)
        torch.cuda.synchronize()
        assert torch.equal(got, want), f"{fmt} {mode}"


@requires_sm90a("_fp8_block_gemv_sm90a", "_nvfp4_gemv_sm90a")
@pytest.mark.parametrize("fmt", ["fp8_block", "nvfp4"])
@pytest.mark.parametrize("n", [4096, 1024])
@pytest.mark.parametrize("M", [1, 8, 16, 40])
def test_pdl_hopper_gemv_chain_static_weight(monkeypatch, fmt, n, M):
    """The Hopper decode GEMVs with static_weight=True: with PDL on for them (TORCHQUANT_PDL=1,
    TORCHQUANT_PDL_HOPPER_GEMV=1, smem) the TMA producer issues the first stages' weight (nvfp4:
    and scales) before its wait; the bits of the chain without PDL, eagerly and from a graph.
    n = 1024 splits K (the reduction follows); M = 40: three token tiles (units past the first)."""
    layers = _hopper_gemv_layers(fmt, n, seed=21 + M + n, static=True)
    settings = [{"TORCHQUANT_PDL": "1"}, {"TORCHQUANT_PDL_HOPPER_GEMV": "1"}, {"TORCHQUANT_PDL": "smem"},
                {}]
    _check_chain_settings(monkeypatch, layers, M, n, 400 + M, settings, f"{fmt} static n={n} M={M}")


@requires_cuda
@pytest.mark.parametrize("nk", [(4096, 4096), (96, 16384), (257, 4112)], ids=["4096x4096", "ksplit", "ragged"])
@pytest.mark.parametrize("M", [1, 8, 16, 32])
@pytest.mark.parametrize("mode", [None, "1", "smem"])
def test_pdl_int8_gemv_static_weight(monkeypatch, nk, M, mode):
    """int8_matmul's gemv with static_weight=True (its first round of weight loads before the PDL
    wait), fed by quantize_int8 launched right before it (the dynamic W8A8 pair; x is written by
    that kernel): the bits without PDL, with aligned rows, a K split across blocks (96 x 16384) and
    rows off 16 bytes (K = 4112, weight view one byte into its storage), eagerly and from a graph."""
    ops = torch.ops.torchquant
    N, Kk = nk
    g = torch.Generator().manual_seed(M + N)
    w = torch.randn(N, Kk, generator=g)
    wq, ws, _ = (t.cuda() for t in ops.quantize_int8(w, True, True))
    if N == 257:
        buf = torch.empty(wq.numel() + 1, dtype=torch.int8, device="cuda")
        wq = buf[1:].view(N, Kk)
        wq.copy_(ops.quantize_int8(w, True, True)[0].cuda())
        torch.cuda.synchronize()  # the weight is written long before the calls below
    xs = [torch.randn(M, Kk, generator=g).to(torch.bfloat16).cuda() for _ in range(3)]

    def run(static):
        outs = []
        for x in xs:
            q, s, _ = ops.quantize_int8(x, True, True)
            outs.append(ops.int8_matmul(q, s, None, wq, ws, None, None, torch.bfloat16, "gemv", static))
        return tuple(outs)

    monkeypatch.setenv("TORCHQUANT_PDL", "0")
    want = run(False)
    torch.cuda.synchronize()
    _set_env(monkeypatch, {"TORCHQUANT_PDL": mode})
    for _ in range(2):
        poison_cuda()
        got = run(True)
        torch.cuda.synchronize()
        assert all(torch.equal(a, b) for a, b in zip(got, want)), f"{nk} M={M} {mode}"
    graph_replay_matches_eager(lambda: run(True), poison=True)
