"""The tiled fp8_block weight (csrc/fp8/fp8_tiles.h) on the CPU: fp8_block_tile against an
element-by-element reference of the order, exact round trips, and fp8_block_gemv(tiled=True)
against the row-major weight bit for bit (the CPU untiles, then runs the same sums). The CUDA
side (the direct GEMV's tiled builds, the op on CUDA, refusals) is in test_fp8_cuda.py."""

import pytest
import torch

import torchquant  # noqa: F401  (registers torch.ops.torchquant)
from torchquant import ops

SHAPES = [(16, 64, 64), (32, 128, 128), (48, 320, 128), (64, 192, 256), (16, 448, 192)]


def _weight(n, k, bs, seed):
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(n, k, generator=gen) * torch.exp2(torch.randint(-3, 4, (n, 1), generator=gen).float())
    return ops.quantize_fp8_block(w, bs)


def _tile_reference(w_q, w_scale):
    """The order written out one element at a time: tile i, piece p, row r, byte b of the weight at
    ((i * P + p) * 16 + r) * 64 + b; tile i, block j, row r of the scales at (i * nb + j) * 16 + r."""
    n, k = w_q.shape
    nb = w_scale.shape[1]
    wb, s = w_q.view(torch.uint8).reshape(-1).tolist(), w_scale.reshape(-1).tolist()
    tw, ts = [0] * (n * k), [0.0] * (n * nb)
    pieces = k // 64
    for row in range(n):
        i, r = divmod(row, 16)
        for col in range(k):
            p, b = divmod(col, 64)
            tw[((i * pieces + p) * 16 + r) * 64 + b] = wb[row * k + col]
        for j in range(nb):
            ts[(i * nb + j) * 16 + r] = s[row * nb + j]
    return (torch.tensor(tw, dtype=torch.uint8).view(n, k),
            torch.tensor(ts, dtype=torch.float32).view(n, nb))


@pytest.mark.parametrize("n,k,bs", SHAPES)
def test_tile_matches_reference_and_round_trips(n, k, bs):
    w_q, w_scale = _weight(n, k, bs, seed=n + k)
    before = w_q.view(torch.uint8).clone(), w_scale.clone()
    tq, ts = ops.fp8_block_tile(w_q, w_scale)
    assert torch.equal(before[0], w_q.view(torch.uint8)) and torch.equal(before[1], w_scale)  # not in place
    rq, rs = _tile_reference(w_q, w_scale)
    assert tq.shape == w_q.shape and tq.dtype == torch.float8_e4m3fn and tq.is_contiguous()
    assert ts.shape == w_scale.shape and ts.dtype == torch.float32 and ts.is_contiguous()
    assert torch.equal(tq.view(torch.uint8), rq) and torch.equal(ts, rs)
    bq, bs_ = ops.fp8_block_tile(tq, ts, inverse=True)
    assert torch.equal(bq.view(torch.uint8), w_q.view(torch.uint8)) and torch.equal(bs_, w_scale)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("n,k,bs", SHAPES)
def test_gemv_tiled_same_bits_cpu(dtype, n, k, bs):
    w_q, w_scale = _weight(n, k, bs, seed=3 * n + k)
    tq, ts = ops.fp8_block_tile(w_q, w_scale)
    gen = torch.Generator().manual_seed(k)
    bias = torch.randn(n, generator=gen).to(dtype)
    for m in (1, 2, 7, 16, 17):
        x = torch.randn(m, k, generator=gen).to(dtype)
        for b in (None, bias):
            want = ops.fp8_block_gemv(x, w_q, w_scale, bs, b)
            got = ops.fp8_block_gemv(x, tq, ts, bs, b, "auto", False, True)
            assert torch.equal(got, want), (m, b is None)
            assert torch.equal(ops.fp8_block_gemv(x, tq, ts, bs, b, "cpu", True, True), want)


def test_tiled_is_not_row_major():
    """Reading a tiled weight as rows gives another answer (so tiled= matters and is tested)."""
    w_q, w_scale = _weight(32, 256, 128, seed=5)
    tq, ts = ops.fp8_block_tile(w_q, w_scale)
    x = torch.randn(2, 256).bfloat16()
    assert not torch.equal(ops.fp8_block_gemv(x, tq, ts, 128), ops.fp8_block_gemv(x, w_q, w_scale, 128))


def test_tile_errors():
    w_q, w_scale = _weight(32, 128, 64, seed=6)
    with pytest.raises(RuntimeError, match=r"fp8_block_tile: the tiled fp8 weight needs N % 16 == 0 and K % 64 == 0 "
                                           r"\(whole 16-row tiles of 64-byte pieces\), got N = 24, K = 128"):
        ops.fp8_block_tile(w_q[:24], w_scale[:24])
    w96, s96 = _weight(32, 96, 32, seed=7)
    with pytest.raises(RuntimeError, match="got N = 32, K = 96"):
        ops.fp8_block_tile(w96, s96)
    with pytest.raises(RuntimeError, match=r"w_scale must be \[N, nb\] with N = 32"):
        ops.fp8_block_tile(w_q, w_scale[:16])
    with pytest.raises(RuntimeError, match="w_q must be Float8_e4m3fn"):
        ops.fp8_block_tile(w_q.view(torch.uint8), w_scale)
    with pytest.raises(RuntimeError, match="w_scale must be contiguous"):
        ops.fp8_block_tile(w_q, w_scale.t().contiguous().t())
    x = torch.randn(1, 96).half()
    with pytest.raises(RuntimeError, match="fp8_block_gemv: the tiled fp8 weight needs .* got N = 32, K = 96"):
        ops.fp8_block_gemv(x, w96, s96, 32, None, "auto", False, True)
    with pytest.raises(RuntimeError, match="path 'direct' is not a CPU path"):
        ops.fp8_block_gemv(torch.randn(1, 128).half(), w_q, w_scale, 64, None, "direct", False, True)
