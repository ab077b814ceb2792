"""Programmatic dependent launch of the decode GEMVs (TORCHQUANT_PDL=1, csrc/common/pdl.h).

With PDL the fp8_block ring GEMV and the nvfp4 mma GEMV may start while the kernel before them
is still running: they stream their first weight stages, then wait for that kernel before
reading x. These tests make every GEMV read an activation that the kernel right before it
wrote: a chain of 4096 x 4096 GEMVs (each one's output is the next one's x) behind a slow
reduction that writes the first x over a NaN-filled buffer. A GEMV that read x before its
predecessor finished would see NaN or a stale value. Eager and CUDA-graph runs must give the
bits of the same chain without PDL (the arithmetic does not change). On a GPU below
compute capability 9.0 the variable is ignored and the tests check just that.
"""

import pytest
import torch

import torchquant  # noqa: F401
from conftest import graph_replay_matches_eager, poison_cuda, requires_cuda

ops = torch.ops.torchquant
N = K = 4096
DEPTH = 4


def _weights(fmt, seed):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(DEPTH):
        w = (torch.randn(N, K, generator=g) / K ** 0.5).cuda()  # keeps |y| ~ |x| along the chain
        if fmt == "fp8":
            out.append(ops.quantize_fp8_block(w, 128))
        else:
            out.append(ops.quantize_nvfp4(w))
    torch.cuda.synchronize()  # the weights are written long before the GEMVs (PDL's precondition)
    return out


def _gemv(fmt, x, wt):
    if fmt == "fp8":
        return ops.fp8_block_gemv(x, wt[0], wt[1], 128, None, "auto")
    return ops.nvfp4_gemv(x, wt[0], wt[1], wt[2], None, "auto")


def _chain(fmt, big, xbuf, ws):
    """A slow producer writes x (over NaN), then DEPTH GEMVs each read the previous output."""
    xbuf.fill_(float("nan"))
    torch.sum(big, dim=0, out=xbuf)
    ys = []
    x = xbuf
    for wt in ws:
        x = _gemv(fmt, x, wt)
        ys.append(x)
    return ys


@requires_cuda
@pytest.mark.parametrize("fmt", ["fp8", "nvfp4"])
@pytest.mark.parametrize("M", [1, 8, 16])
def test_pdl_chain_matches_serial(monkeypatch, fmt, M):
    ws = _weights(fmt, seed=M)
    g = torch.Generator().manual_seed(100 + M)
    big = torch.randn(512, M, K, generator=g).to(torch.bfloat16).cuda()  # the producer's input
    xbuf = torch.empty(M, K, dtype=torch.bfloat16, device="cuda")

    monkeypatch.delenv("TORCHQUANT_PDL", raising=False)
    want = [y.clone() for y in _chain(fmt, big, xbuf, ws)]
    torch.cuda.synchronize()
    assert all(torch.isfinite(y.float()).all() for y in want)

    monkeypatch.setenv("TORCHQUANT_PDL", "1")
    for _ in range(3):
        poison_cuda()
        got = _chain(fmt, big, xbuf, ws)
        torch.cuda.synchronize()
        for a, b in zip(got, want):
            assert torch.equal(a, b)

    # Captured with PDL (programmatic edges in the graph), replayed over NaN: the eager bits,
    # which are the serial chain's (above).
    graph_replay_matches_eager(lambda: tuple(_chain(fmt, big, xbuf, ws)), replays=3, poison=True)


@requires_cuda
def test_pdl_quantlinear_decode(monkeypatch):
    """QuantLinear fp8_block / nvfp4 at M = 1 with TORCHQUANT_PDL=1: the bits without it."""
    from torchquant.nn import QuantLinear

    lin = torch.nn.Linear(K, N, bias=True, dtype=torch.bfloat16)
    x = torch.randn(1, K, dtype=torch.bfloat16, device="cuda")
    for fmt in ("fp8_block", "nvfp4"):
        q = QuantLinear.from_float(lin, format=fmt).cuda()
        torch.cuda.synchronize()
        monkeypatch.delenv("TORCHQUANT_PDL", raising=False)
        want = q(x * 2)
        monkeypatch.setenv("TORCHQUANT_PDL", "1")
        poison_cuda()
        got = q(x * 2)  # x * 2: the kernel right before the layer writes its input
        assert torch.equal(got, want)

