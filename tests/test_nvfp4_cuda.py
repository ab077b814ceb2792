"""CUDA nvfp4 ops (csrc/nvfp4/): nvfp4_gemv on every forced path, quantize_nvfp4
and dequantize_nvfp4 bit-identical to the CPU op, and clear errors.

(a) every byte value decodes exactly: dequantize_nvfp4 on the GPU against the
    CPU op bit for bit, and a one-hot x through each GEMV path (y = W^T,
    which no summation order can perturb) against the CPU dequantization.
(b) every forced path x fp16/bf16 x bias x M in 1..16, 17, 40 x odd N x K
    with a 16-code tail, a 64-code tail, chunk tails and the aligned case,
    against float64 over the dequantized weight with the derived
    fp32-accumulation bound. Weights, block scales and x are random along K,
    so a wrong k mapping of weight, scale or activation cannot pass.
(c) quantize / dequantize CUDA == CPU bit for bit, ties included.
(d) bad inputs raise the validator's messages.
"""

import re

import pytest
import torch

import torchquant  # noqa: F401  (loads the op library)
from torchquant import reference as ref

from conftest import (HAS_CUDA, graph_replay_matches_eager, kernels_launched, misaligned, narrow_dram,
                      nvfp4_direct_by_auto, poison_cuda, requires_sm90a, sm_count)

pytestmark = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")

ops = torch.ops.torchquant
DTYPES = [torch.float16, torch.bfloat16]
PATHS = ["fma", "mma"]
# path "wgmma": the Hopper decode GEMV in torchquant._C_sm90a (TMA + warpgroup MMA)
WGMMA = requires_sm90a("_nvfp4_gemv_sm90a") if HAS_CUDA else pytest.mark.skip(reason="needs a CUDA GPU")
WGMMA_TILES = ["16x2s3", "16x2s4", "16x1"]
INT_VIEW = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16}


def _need(path):
    if path in ("mma", "tile") and torch.cuda.get_device_capability() < (8, 0):
        pytest.skip(f"the {path} path needs sm_80+")


def _poison():
    """NaN-fill freed allocator blocks (both pools), so an unwritten output shows."""
    poison_cuda()


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _scales(rows, cols, g, negative=False):
    """Finite e4m3 block scales spanning 2^-9 .. 448 (subnormals too), ~5% zero."""
    mag = torch.exp2(torch.empty(rows, cols).uniform_(-10.0, 8.8, generator=g)).clamp(max=448.0)
    mag[torch.rand(rows, cols, generator=g) < 0.05] = 0.0
    if negative:
        mag[torch.rand(rows, cols, generator=g) < 0.25] *= -1.0
    return mag.to(torch.float8_e4m3fn)


def _operands(M, N, K, dtype, seed):
    g = _gen(seed)
    wp = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8, generator=g)
    ws = _scales(N, K // 16, g)
    gs = torch.tensor(0.0123 * (1.0 + torch.rand(1, generator=g).item()))
    x = torch.randn(M, K, generator=g).to(dtype)
    bias = torch.randn(N, generator=g).to(dtype)
    return x.cuda(), wp.cuda(), ws.cuda(), gs.cuda(), bias.cuda()


# ------------------------------------------------------------- (a) decode --
@pytest.mark.parametrize("out_dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_dequantize_every_byte_bit_exact(out_dtype):
    N, K = 64, 64  # 2048 bytes: every value 8 times, at varying positions
    wp = ((torch.arange(N * K // 2) * 37) % 256).to(torch.uint8).reshape(N, K // 2)
    codes = torch.arange(256, dtype=torch.uint8)
    codes[codes == 0x7F] = 0x38  # NaN codes -> 1.0 (quantize never stores NaN)
    codes[codes == 0xFF] = 0xB8
    ws = codes[torch.randperm(256, generator=_gen(1))].reshape(N, K // 16).view(torch.float8_e4m3fn)
    gs = torch.tensor(0.0123)
    want = ops.dequantize_nvfp4(wp, ws, gs, out_dtype)
    _poison()
    got = ops.dequantize_nvfp4(wp.cuda(), ws.cuda(), gs.cuda(), out_dtype).cpu()
    assert got.dtype == out_dtype and got.shape == (N, K)
    assert torch.equal(got.view(INT_VIEW[out_dtype]), want.view(INT_VIEW[out_dtype]))


@pytest.mark.parametrize("out_dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("offset", [0, 1, 8])
@pytest.mark.parametrize("N,K", [(1, 16), (37, 1024 + 48), (5, 8192)])
def test_dequantize_pointer_alignment(out_dtype, offset, N, K):
    """The vectorized kernel (8-byte aligned w_packed: offsets 0 and 8) and the
    per-byte one (offset 1) give the CPU op's bits, with negative and
    subnormal block scales."""
    g = _gen(N * K + offset)
    wp = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8, generator=g)
    ws = _scales(N, K // 16, g, negative=True)
    gs = torch.tensor(0.37)
    want = ops.dequantize_nvfp4(wp, ws, gs, out_dtype)
    flat = torch.empty(wp.numel() + offset, dtype=torch.uint8, device="cuda")
    wp_dev = flat[offset:].view(N, K // 2)
    wp_dev.copy_(wp)
    assert wp_dev.data_ptr() % 256 == offset
    _poison()
    got = ops.dequantize_nvfp4(wp_dev, ws.cuda(), gs.cuda(), out_dtype).cpu()
    assert torch.equal(got.view(INT_VIEW[out_dtype]), want.view(INT_VIEW[out_dtype]))


def test_dequantize_nan_scale():
    """A NaN block scale (e4m3 0x7f) makes its 16 outputs NaN on both kernels."""
    for offset in (0, 1):
        wp = torch.full((2, 16), 0x22, dtype=torch.uint8)  # codes 2 (1.0)
        ws = torch.full((2, 2), 0x38, dtype=torch.uint8)  # 1.0
        ws[1, 0] = 0x7F
        flat = torch.empty(wp.numel() + offset, dtype=torch.uint8, device="cuda")
        wp_dev = flat[offset:].view(2, 16)
        wp_dev.copy_(wp)
        got = ops.dequantize_nvfp4(wp_dev, ws.view(torch.float8_e4m3fn).cuda(),
                                   torch.tensor(2.0, device="cuda"), torch.float32).cpu()
        assert torch.isnan(got[1, :16]).all()
        assert (got[0] == 2.0).all() and (got[1, 16:] == 2.0).all()


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("K", [48, 320])  # 16-code granules / 64-code (aligned) loads
def test_gemv_one_hot_decodes_every_byte(path, dtype, K):
    """x = I: y[k, n] = w[n, k] exactly (a single nonzero product per output),
    so every nibble of every byte value, with every block scale including
    negative and subnormal ones, must match the CPU dequantization bit for bit
    after the one rounding to x's dtype."""
    _need(path)
    _one_hot_check(path, dtype, 64, K, seed=K)


def _one_hot_check(path, dtype, N, K, seed):
    """nvfp4_gemv(eye(K), w) on `path` equals the CPU dequantization of w, transposed, bit for
    bit (every byte value cycles through the weight; signed and subnormal block scales)."""
    wp = ((torch.arange(N * K // 2) * 37 + 11) % 256).to(torch.uint8).reshape(N, K // 2)
    ws = _scales(N, K // 16, _gen(seed), negative=True)
    gs = torch.tensor(0.0123)
    want = ops.dequantize_nvfp4(wp, ws, gs, dtype).t()  # [K, N]
    x = torch.eye(K, dtype=dtype, device="cuda")  # M = K: several M tiles
    _poison()
    y = ops.nvfp4_gemv(x, wp.cuda(), ws.cuda(), gs.cuda(), None, path).cpu()
    assert y.dtype == dtype and y.shape == (K, N)
    assert torch.equal(y, want)  # values: a -0 weight may come out as +0


# ------------------------------------------------------------- (b) gemv ----
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("N", [1, 15, 17, 257])
@pytest.mark.parametrize("K", [16, 48, 144, 320, 2112, 4112, 8192])
def test_gemv_forced_paths(path, dtype, N, K):
    _need(path)
    _m_sweep_check(path, dtype, N, K, seed=N * 100003 + K, label=path)


def _m_sweep_check(path, dtype, N, K, seed, label):
    """nvfp4_gemv on `path` at M = 1..16, 17, 40, with and without bias, on a poisoned
    allocator, within the fp32-accumulation bound of a float64 reference."""
    x_all, wp, ws, gs, bias = _operands(40, N, K, dtype, seed=seed)
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    for M in list(range(1, 17)) + [17, 40]:
        x = x_all[:M].contiguous()
        for b in (None, bias):
            _poison()
            y = ops.nvfp4_gemv(x, wp, ws, gs, b, path)
            assert y.dtype == dtype and y.shape == (M, N)
            want = ref.linear_ref(x, wd, b)
            bound = ref.fp32_accum_bound(x, wd, b, dtype)
            frac = ref.worst_fraction(y, want, bound)
            assert frac <= 1.0, f"{label} {dtype} M={M} N={N} K={K} bias={b is not None}: {frac}"


# ------------------------------------- (b1) direct GEMV, weight layout 3 ----
# path "direct" (docs/nvfp4_gemv.md 27-28): the only CUDA kernel reading layout 3 (layout 1's
# decode on adjacent codes), bf16 x, K % 128 == 0; 16 weight rows x 8 x rows per block.
def _need_direct():
    if torch.cuda.get_device_capability() < (8, 0):
        pytest.skip("the direct GEMV needs sm_80+")


def test_gemv_direct_one_hot_decodes_every_byte():
    """x = I (M = K: 48 token tiles): y = W^T bit for bit, every byte value, signed and
    subnormal block scales, through layout 3."""
    _need_direct()
    N, K = 64, 384
    wp = ((torch.arange(N * K // 2) * 37 + 11) % 256).to(torch.uint8).reshape(N, K // 2)
    ws = _scales(N, K // 16, _gen(9), negative=True)
    gs = torch.tensor(0.0123)
    want = ops.dequantize_nvfp4(wp, ws, gs, torch.bfloat16).t()
    w3 = ops.nvfp4_relayout(wp.cuda(), 3)
    x = torch.eye(K, dtype=torch.bfloat16, device="cuda")
    for path in ("direct", "auto"):
        _poison()
        y = ops.nvfp4_gemv(x, w3, ws.cuda(), gs.cuda(), None, path, 3).cpu()
        assert y.dtype == torch.bfloat16 and y.shape == (K, N)
        assert torch.equal(y, want)


@pytest.mark.parametrize("N", [1, 15, 17, 257])
@pytest.mark.parametrize("K", [128, 384, 2176, 8192])
def test_gemv_direct_layout3(N, K):
    """M = 1..16, 17, 40 (several token tiles), with and without bias, on a poisoned allocator,
    within the fp32-accumulation bound of a float64 reference; static_weight gives the same bits.
    (auto's choice of this path: test_gemv_direct_auto_rule.)"""
    _need_direct()
    x_all, wp, ws, gs, bias = _operands(40, N, K, torch.bfloat16, seed=N * 7919 + K)
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    w3 = ops.nvfp4_relayout(wp, 3)
    for M in list(range(1, 17)) + [17, 40]:
        x = x_all[:M].contiguous()
        for b in (None, bias):
            _poison()
            y = ops.nvfp4_gemv(x, w3, ws, gs, b, "direct", 3)
            assert y.dtype == torch.bfloat16 and y.shape == (M, N)
            frac = ref.worst_fraction(y, ref.linear_ref(x, wd, b), ref.fp32_accum_bound(x, wd, b, x.dtype))
            assert frac <= 1.0, f"direct M={M} N={N} K={K} bias={b is not None}: {frac}"
            _poison()
            assert torch.equal(ops.nvfp4_gemv(x, w3, ws, gs, b, "direct", 3, True).view(torch.int16),
                               y.view(torch.int16))


@pytest.mark.parametrize("build", [str(b) for b in range(2, 16)])
def test_gemv_direct_load_depth_builds_same_bits(monkeypatch, build):
    """TORCHQUANT_NVFP4_DIRECT=2..15 (U = 3 / 3 blocks, U = 4 / 2, U = 2 with the next round issued
    before the decode / 2, U = 6 / 2, U = 3 issued early / 2; with x loaded in the round's issue U = 2
    / 2, U = 2 / 3, U = 3 / 2; 32 rows per block U = 1 / 3, U = 2 / 2; 64 rows U = 1 / 2; two token
    tiles per pass: 16 rows U = 1, 32 rows U = 1, 16 rows U = 2): each warp still sums its pieces in
    the same order, and the x columns that builds 7..15 zero are never stored, so the default
    build's bits, over ragged N (blocks of 32 / 64 rows with 1 .. 63 rows past N), one to several
    rounds and token tiles (M = 5, 9, 17: partial tiles and passes), bias or none."""
    _need_direct()
    for N, K in ((257, 2176), (17, 8192), (33, 128), (100, 1024)):
        x_all, wp, ws, gs, bias = _operands(17, N, K, torch.bfloat16, seed=N * 31 + K)
        w3 = ops.nvfp4_relayout(wp, 3)
        for M in (1, 5, 8, 9, 16, 17):
            x = x_all[:M].contiguous()
            for b in (None, bias):
                monkeypatch.delenv("TORCHQUANT_NVFP4_DIRECT", raising=False)
                y0 = ops.nvfp4_gemv(x, w3, ws, gs, b, "direct", 3)
                monkeypatch.setenv("TORCHQUANT_NVFP4_DIRECT", build)
                _poison()
                y = ops.nvfp4_gemv(x, w3, ws, gs, b, "direct", 3)
                assert torch.equal(y.view(torch.int16), y0.view(torch.int16)), (build, N, K, M, b is not None)


@pytest.mark.parametrize("K", [256, 4096, 4224, 8192, 16384, 16512])
def test_gemv_direct_auto_rule(monkeypatch, K):
    """Path auto on a layout-3 weight runs the direct GEMV exactly where direct_rule says (grids of
    SMs .. 3 x SMs blocks of 16 rows: M <= 16, K <= 4096; with 4096 < K <= 16384 on grids of
    <= 2 x SMs blocks M <= 8 on cards of <= 15 DRAM bytes per SM clock, M = 4..8 on the others; on
    larger grids, on those cards M <= 8 with K <= 8192, on the others M = 5..8 with K <= 4096 where
    the 64-row grid is SMs + 1 .. 2 x SMs blocks;
    TORCHQUANT_NVFP4_DIRECT_MAX_M overrides), in the build direct_build picks (M = 9..16: 16 x rows
    per pass, 16 weight rows at U = 2 on grids of <= 2 x SMs blocks, else 16 rows at U = 1 up to
    M = 12 on grids of <= 3 x SMs, else 32 rows at U = 1; on grids of more than 3 x SMs blocks at
    M = 4..8: 64 rows per block, U = 1, 2 blocks per SM where that grid is <= 4 x SMs blocks, else
    32 rows, U = 1, 3 per SM; otherwise 16 rows, x loaded with the weight, U = 2, at 2 blocks per SM
    on grids of <= 2 x SMs blocks, else 3), with the forced path's bits, and otherwise the mma /
    wgmma GEMV (x unpermuted) with that path's bits."""
    _need_direct()
    monkeypatch.delenv("TORCHQUANT_NVFP4_DIRECT", raising=False)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    narrow_bw = narrow_dram()
    # blocks SMs - 1/2, 2 SMs (+ 1), 3 SMs (+ 1), 7 SMs + 1 (a larger grid; K <= 8192 only: 64-row
    # blocks 1.75 SMs + 1), 8 SMs (64-row blocks 2 SMs) and 8 SMs + 1 (2 SMs + 1)
    Ns = (16 * sms - 8, 32 * sms, 32 * sms + 8, 48 * sms, 48 * sms + 1)
    Ns += (112 * sms + 8, 128 * sms, 128 * sms + 8) if K <= 8192 else ()
    Ns += (272 * sms + 8,) if K == 256 else ()  # 64-row grid > 4 x SMs: the 32-row build
    for N in Ns:
        blocks = (N + 15) // 16
        x_all, wp, ws, gs, bias = _operands(17, N, K, torch.bfloat16, seed=N + K)
        w3 = ops.nvfp4_relayout(wp, 3)
        for knob in ("", "2", "-1"):
            monkeypatch.setenv("TORCHQUANT_NVFP4_DIRECT_MAX_M", knob)
            for M in (1, 2, 4, 5, 8, 9, 12, 16, 17):
                x = x_all[:M].contiguous()
                out = {}
                names = kernels_launched(lambda: out.setdefault("y", ops.nvfp4_gemv(x, w3, ws, gs, bias, "auto", 3)))
                builds = []  # (rows per block, U, blocks per SM, x with the weight, token tiles per pass)
                for n in names:
                    b = re.search(r"nvfp4_gemv_direct_kernel<(\d+), (\d+), (true|false), (true|false), false>", n)
                    if b:
                        assert b[3] == "false", names  # no pipelined build is picked
                        builds.append((16, int(b[1]), int(b[2]), b[4] == "true", 1))
                    r = re.search(r"nvfp4_gemv_direct_rows_kernel<(\d+), (\d+), (\d+), (\d+), false>", n)
                    if r:
                        builds.append((16 * int(r[1]), int(r[2]), int(r[3]), True, int(r[4])))
                direct = bool(builds)
                assert direct == nvfp4_direct_by_auto(3, M, N, K), (N, K, M, knob, names)
                if knob == "":
                    one_wave = sms <= blocks <= 3 * sms
                    assert direct == ((one_wave and M <= 16 and K <= 4096) or
                                      ((narrow_bw or M >= 4) and sms <= blocks <= 2 * sms and M <= 8 and
                                       4096 < K <= 16384) or
                                      (blocks > 3 * sms and narrow_bw and K <= 8192 and M <= 8) or
                                      (blocks > 3 * sms and not narrow_bw and K <= 4096 and 5 <= M <= 8 and
                                       sms < (N + 63) // 64 <= 2 * sms)), (N, K, M)
                if direct:
                    if 9 <= M <= 16:
                        want_build = ((16, 2, 2, True, 2) if blocks <= 2 * sms else
                                      (16, 1, 2, True, 2) if blocks <= 3 * sms and M <= 12 else (32, 1, 2, True, 2))
                    elif blocks > 3 * sms and 4 <= M <= 8:
                        want_build = (64, 1, 2, True, 1) if (N + 63) // 64 <= 4 * sms else (32, 1, 3, True, 1)
                    else:
                        want_build = (16, 2, 2 if blocks <= 2 * sms else 3, True, 1)
                    assert builds == [want_build], (N, K, M, names)
                wg = any("fp4_gemv_sm90a_kernel" in n for n in names)
                want = ops.nvfp4_gemv(x, w3, ws, gs, bias, "direct" if direct else "wgmma" if wg else "mma", 3)
                assert torch.equal(out["y"].view(torch.int16), want.view(torch.int16)), (N, K, M, knob)
    monkeypatch.delenv("TORCHQUANT_NVFP4_DIRECT_MAX_M")


# ------------------------ (b1') direct GEMV, layout 4 (layout 3 tiled) ----
# nvfp4_tiles.h, docs/nvfp4_gemv.md 40: the weight and scales per 16-row tile and 64-byte piece;
# the direct GEMV's builds read the same bytes into the same registers as from layout 3.
TILED_BUILDS = ("7", "8", "10", "12", "13", "14", "15")  # direct_kernel_tiled's


@pytest.mark.parametrize("build", ("",) + TILED_BUILDS)
def test_gemv_direct_tiled_same_bits_as_layout3(monkeypatch, build):
    """Each tiled build (and the unforced pick) gives layout 3's bits in the same build, over whole
    and partial blocks of 32 / 64 rows (N = 16, 48, 80 ...), one to several rounds (K = 128 ..
    8192), M = 1..17 and 40 (partial token tiles and passes, several passes), bias or none, on a
    poisoned allocator; static_weight and path 'direct' give auto's bits; and the float64
    reference's bound holds."""
    _need_direct()
    monkeypatch.setenv("TORCHQUANT_NVFP4_DIRECT", build)
    for N, K in ((16, 128), (48, 2176 - 128), (80, 8192), (272, 1024)):
        x_all, wp, ws, gs, bias = _operands(40, N, K, torch.bfloat16, seed=N * 131 + K)
        wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
        w3 = ops.nvfp4_relayout(wp, 3)
        w4, s4 = ops.nvfp4_relayout(wp, 4), ops.nvfp4_relayout_scale(ws, 4)
        for M in list(range(1, 18)) + [40]:
            x = x_all[:M].contiguous()
            for b in (None, bias):
                y3 = ops.nvfp4_gemv(x, w3, ws, gs, b, "direct", 3)
                _poison()
                y4 = ops.nvfp4_gemv(x, w4, s4, gs, b, "auto", 4)
                assert torch.equal(y4.view(torch.int16), y3.view(torch.int16)), (build, N, K, M, b is not None)
                _poison()
                yd = ops.nvfp4_gemv(x, w4, s4, gs, b, "direct", 4, True)
                assert torch.equal(yd.view(torch.int16), y3.view(torch.int16)), (build, N, K, M)
                frac = ref.worst_fraction(y4, ref.linear_ref(x, wd, b), ref.fp32_accum_bound(x, wd, b, x.dtype))
                assert frac <= 1.0, (build, N, K, M, frac)


def test_gemv_direct_tiled_picks_and_refusals(monkeypatch):
    """Unforced, layout 4 runs the tiled form of the build direct_build picks (the kernel name's
    last template argument), at every M, on every grid (at M = 4 the 16-row build where layout 3
    takes the row builds: kDirectRowsMinMTiled); a forced build with no tiled form and the
    other paths are refused with a clear error; misaligned views and graph replay give the bits."""
    _need_direct()
    monkeypatch.delenv("TORCHQUANT_NVFP4_DIRECT", raising=False)
    monkeypatch.delenv("TORCHQUANT_NVFP4_DIRECT_MAX_M", raising=False)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for N, K in ((16 * sms - 16, 4096), (48 * sms + 16, 256), (128 * sms, 8192)):
        x_all, wp, ws, gs, bias = _operands(20, N, K, torch.bfloat16, seed=N + K)
        w3 = ops.nvfp4_relayout(wp, 3)
        w4, s4 = ops.nvfp4_relayout(wp, 4), ops.nvfp4_relayout_scale(ws, 4)
        for M in (1, 4, 8, 12, 16, 20):
            x = x_all[:M].contiguous()
            out = {}
            names = kernels_launched(lambda: out.setdefault("y", ops.nvfp4_gemv(x, w4, s4, gs, bias, "auto", 4)))
            direct = [n for n in names if "nvfp4_gemv_direct" in n]
            assert len(direct) == 1 and re.search(r"direct\w*kernel<[^>]*, true>", direct[0]), (N, K, M, names)
            blocks = (N + 15) // 16
            if M <= 4:  # 16 rows, x with the weight, U = 2; 3 blocks per SM above 2 x SMs (rows from M = 5)
                assert f"nvfp4_gemv_direct_kernel<2, {3 if blocks > 2 * sms else 2}, false, true, true>" in direct[0], \
                    (N, K, M, direct)
            elif M == 8 and blocks > 3 * sms:  # 64 rows per block ((N + 63) / 64 <= 4 x SMs here)
                assert "nvfp4_gemv_direct_rows_kernel<4, 1, 2, 1, true>" in direct[0], (N, K, M, direct)
            assert all("direct" in n for n in names), names  # nothing else: no copy, no other GEMV
            want = ops.nvfp4_gemv(x, w3, ws, gs, bias, "direct", 3)
            assert torch.equal(out["y"].view(torch.int16), want.view(torch.int16)), (N, K, M)
    x, wp, ws, gs, bias = _operands(5, 48, 1152, torch.bfloat16, seed=5)
    w4, s4 = ops.nvfp4_relayout(wp, 4), ops.nvfp4_relayout_scale(ws, 4)
    y = ops.nvfp4_gemv(x, w4, s4, gs, bias, "auto", 4)
    for xb, wb, sb in ((8, 0, 0), (0, 4, 0), (0, 0, 1)):
        _poison()
        got = ops.nvfp4_gemv(misaligned(x, xb), misaligned(w4, wb), misaligned(s4, sb), gs, bias, "auto", 4)
        assert torch.equal(got.view(torch.int16), y.view(torch.int16)), (xb, wb, sb)
    graph_replay_matches_eager(lambda: ops.nvfp4_gemv(x, w4, s4, gs, bias, "auto", 4), replays=2, poison=True)
    for build in ("1", "2", "9", "11"):
        monkeypatch.setenv("TORCHQUANT_NVFP4_DIRECT", build)
        with pytest.raises(RuntimeError, match=f"TORCHQUANT_NVFP4_DIRECT={build} has no layout-4"):
            ops.nvfp4_gemv(x, w4, s4, gs, bias, "auto", 4)


@pytest.mark.parametrize("xres", ["1", "-1"])
@pytest.mark.parametrize("splitk", ["", "2", "4"])
def test_gemv_ring_tiled_same_bits_as_layout3(monkeypatch, xres, splitk):
    """Layout 4 on path 'mma' (the ring kernel's tiled form: weight units and scale words copied
    from their tiled places into the stages layout 3 gives, docs/nvfp4_gemv.md 41) gives layout
    3's path-'mma' bits in the same launch shape: N of whole and half 32-row warps (N % 32 == 16),
    K with a half last stage (K % 256 == 128), x resident or staged (TORCHQUANT_NVFP4_XRES), unsplit
    or split across blocks (TORCHQUANT_NVFP4_SPLITK), M = 1..8, bias, static_weight; the float64
    bound; misaligned views; M tiles of more than 8 rows refused."""
    _need_direct()
    monkeypatch.setenv("TORCHQUANT_NVFP4_XRES", xres)
    if splitk:
        monkeypatch.setenv("TORCHQUANT_NVFP4_SPLITK", splitk)
    else:
        monkeypatch.delenv("TORCHQUANT_NVFP4_SPLITK", raising=False)
    seen = set()
    for N, K in ((16, 128), (48, 1152), (80, 4096 + 128), (256, 8192)):
        x_all, wp, ws, gs, bias = _operands(8, N, K, torch.bfloat16, seed=N * 7 + K)
        wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
        w3 = ops.nvfp4_relayout(wp, 3)
        w4, s4 = ops.nvfp4_relayout(wp, 4), ops.nvfp4_relayout_scale(ws, 4)
        for M in range(1, 9):
            x = x_all[:M].contiguous()
            b = bias if M % 2 else None
            y3 = ops.nvfp4_gemv(x, w3, ws, gs, b, "mma", 3)
            for static in (False, True):
                _poison()
                out = {}
                names = kernels_launched(
                    lambda: out.setdefault("y", ops.nvfp4_gemv(x, w4, s4, gs, b, "mma", 4, static)))
                ring = [n for n in names if "nvfp4_gemv_mma_kernel" in n]
                assert len(ring) == 1 and re.search(r"nvfp4_gemv_mma_kernel<__nv_bfloat16, 1, true, (true|false), "
                                                    r"false, (true|false), 0, 4>", ring[0]), (N, K, M, names)
                seen.add(ring[0].split("<")[1].split(">")[0])
                assert torch.equal(out["y"].view(torch.int16), y3.view(torch.int16)), (N, K, M, static)
            frac = ref.worst_fraction(out["y"], ref.linear_ref(x, wd, b), ref.fp32_accum_bound(x, wd, b, x.dtype))
            assert frac <= 1.0, (N, K, M, frac)
        got = ops.nvfp4_gemv(misaligned(x_all, 8), misaligned(w4, 4), misaligned(s4, 1), gs, bias, "mma", 4)
        assert torch.equal(got.view(torch.int16), ops.nvfp4_gemv(x_all, w3, ws, gs, bias, "mma", 3).view(torch.int16))
    # the forms this parametrization was meant to reach (kSplit and kXRes in the kernel's name:
    # template arguments 3 and 5)
    args = [n.split(", ") for n in seen]
    assert not splitk or any(a[3] == "true" for a in args), (splitk, seen)
    assert any(a[5] == "true" for a in args) if xres == "1" else all(a[5] == "false" for a in args), (xres, seen)
    # M = 16 on a small layer: the launch shape's M tiles are of 8 rows (two of them; more blocks
    # than one 16-row tile gives), which the tiled form runs, with layout 3's bits
    x16, wp, ws, gs, _ = _operands(16, 256, 4096, torch.bfloat16, seed=3)
    w4, s4 = ops.nvfp4_relayout(wp, 4), ops.nvfp4_relayout_scale(ws, 4)
    w3 = ops.nvfp4_relayout(wp, 3)
    assert torch.equal(ops.nvfp4_gemv(x16, w4, s4, gs, None, "mma", 4).view(torch.int16),
                       ops.nvfp4_gemv(x16, w3, ws, gs, None, "mma", 3).view(torch.int16))
    # a launch shape of 16-row M tiles (what the large layers take at M = 9..16; forced here)
    monkeypatch.setenv("TORCHQUANT_NVFP4_TILE_M", "16")
    with pytest.raises(RuntimeError, match="layout 4 on path 'mma' runs the ring kernel, whose M tiles hold at most 8"):
        ops.nvfp4_gemv(x16, w4, s4, gs, None, "mma", 4)


def test_gemv_direct_views_graph_and_many_tiles():
    """Misaligned views of x, w_packed and w_scale (copied by the op) give the aligned bits; CUDA
    graph replay gives the eager bits; more token tiles than the grid's 65535 (the kernel loops)
    give each row the bits of the same rows alone."""
    _need_direct()
    M, N, K = 5, 33, 1152
    x, wp, ws, gs, bias = _operands(M, N, K, torch.bfloat16, seed=77)
    w3 = ops.nvfp4_relayout(wp, 3)
    y = ops.nvfp4_gemv(x, w3, ws, gs, bias, "direct", 3)

    for xb, wb, sb in ((8, 0, 0), (0, 4, 0), (0, 0, 1), (2, 8, 1)):
        _poison()
        got = ops.nvfp4_gemv(misaligned(x, xb), misaligned(w3, wb), misaligned(ws, sb), gs, bias, "direct", 3)
        assert torch.equal(got.view(torch.int16), y.view(torch.int16)), (xb, wb, sb)
    graph_replay_matches_eager(lambda: ops.nvfp4_gemv(x, w3, ws, gs, bias, "direct", 3), replays=2, poison=True)
    # 65535 * 8 + 24 rows of x: the grid's y stops at 65535 tiles and the last 3 tiles loop
    Mb, Nb, Kb = 65535 * 8 + 24, 16, 128
    xb_, wpb, wsb, gsb, _ = _operands(1, Nb, Kb, torch.bfloat16, seed=3)
    xbig = torch.randn(Mb, Kb, device="cuda").to(torch.bfloat16)
    w3b = ops.nvfp4_relayout(wpb, 3)
    _poison()
    ybig = ops.nvfp4_gemv(xbig, w3b, wsb, gsb, None, "direct", 3)
    for r0 in (0, Mb - 24, 65535 * 8 - 8):
        part = ops.nvfp4_gemv(xbig[r0:r0 + 24].contiguous(), w3b, wsb, gsb, None, "direct", 3)
        assert torch.equal(ybig[r0:r0 + 24].view(torch.int16), part.view(torch.int16)), r0


# ------------------------------------------------------ (b2) tile GEMM ----
# path "tile" (auto for M > 48 when K % 128 == 0): 64 x 64 output tiles, the
# weight decoded once per block into shared memory, K split across blocks
# (fp32 workspace + ordered reduce) when the tiles leave SMs idle.
@pytest.mark.parametrize("dtype", DTYPES)
def test_tile_one_hot_decodes_every_byte(dtype):
    """x = I (M = K = 256: four 64-row M tiles): every byte value with every block
    scale, negative and subnormal ones too, must equal the CPU dequantization."""
    _need("tile")
    N, K = 64, 256
    wp = ((torch.arange(N * K // 2) * 37 + 11) % 256).to(torch.uint8).reshape(N, K // 2)
    ws = _scales(N, K // 16, _gen(K + 1), negative=True)
    gs = torch.tensor(0.0123)
    want = ops.dequantize_nvfp4(wp, ws, gs, dtype).t()
    x = torch.eye(K, dtype=dtype, device="cuda")
    _poison()
    y = ops.nvfp4_gemv(x, wp.cuda(), ws.cuda(), gs.cuda(), None, "tile").cpu()
    assert torch.equal(y, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("N", [1, 17, 64, 257])
@pytest.mark.parametrize("K", [128, 1024, 4224])
@pytest.mark.parametrize("splits", ["", "1", "3"])
def test_tile_forced(monkeypatch, dtype, N, K, splits):
    _need("tile")
    if splits:
        monkeypatch.setenv("TORCHQUANT_TILE_SPLITS", splits)
    x_all, wp, ws, gs, bias = _operands(130, N, K, dtype, seed=N * 7 + K)
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    for M in (1, 5, 16, 17, 40, 64, 65, 130):
        x = x_all[:M].contiguous()
        for b in (None, bias):
            _poison()
            y = ops.nvfp4_gemv(x, wp, ws, gs, b, "tile")
            assert y.dtype == dtype and y.shape == (M, N)
            frac = ref.worst_fraction(y, ref.linear_ref(x, wd, b), ref.fp32_accum_bound(x, wd, b, dtype))
            assert frac <= 1.0, f"tile splits={splits} {dtype} M={M} N={N} K={K} bias={b is not None}: {frac}"
            if M > 48:  # auto takes the tile path from M = 49
                assert torch.equal(ops.nvfp4_gemv(x, wp, ws, gs, b, "auto"), y)


def test_tile_unaligned_views_and_bad_k():
    """Odd views (8-byte-offset codes, 1-byte-offset scales, 6-byte-offset x) are
    copied; K % 128 != 0 with path "tile" raises, while auto falls back to mma."""
    _need("tile")
    M, N, K = 20, 33, 256
    x_all, wp_all, ws_all, gs, _ = _operands(M + 1, N + 1, K + 16, torch.float16, seed=5)
    x = x_all.reshape(-1)[3 : 3 + M * K].view(M, K)
    wp = wp_all.reshape(-1)[8 : 8 + N * K // 2].view(N, K // 2)
    ws = ws_all.reshape(-1)[1 : 1 + N * K // 16].view(N, K // 16)
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    y = ops.nvfp4_gemv(x, wp, ws, gs, None, "tile")
    assert ref.worst_fraction(y, ref.linear_ref(x, wd), ref.fp32_accum_bound(x, wd, None, torch.float16)) <= 1.0
    x2, wp2, ws2, gs2, _ = _operands(20, 16, 192, torch.float16, seed=6)
    with pytest.raises(RuntimeError, match="K % 128 == 0"):
        ops.nvfp4_gemv(x2, wp2, ws2, gs2, None, "tile")
    wd2 = ref.dequantize_nvfp4_ref(wp2, ws2, gs2)
    y2 = ops.nvfp4_gemv(x2, wp2, ws2, gs2, None, "auto")
    assert ref.worst_fraction(y2, ref.linear_ref(x2, wd2), ref.fp32_accum_bound(x2, wd2, None, torch.float16)) <= 1.0


def _set_tile(monkeypatch, tile):
    """TORCHQUANT_NVFP4_TILE_M = tile (rows of x per M tile), or unset (the launch rule) for None."""
    if tile is None:
        monkeypatch.delenv("TORCHQUANT_NVFP4_TILE_M", raising=False)
    else:
        monkeypatch.setenv("TORCHQUANT_NVFP4_TILE_M", tile)


def _within_bound(y, x, wd, b, what):
    """y within the fp32-accumulation bound of float64 over the dequantized weight."""
    frac = ref.worst_fraction(y, ref.linear_ref(x, wd, b), ref.fp32_accum_bound(x, wd, b, x.dtype))
    assert frac <= 1.0, f"{what}: {frac}"


def _mma_checked(x, wp, ws, gs, b, wd, what):
    """nvfp4_gemv(path="mma") on a poisoned allocator, within the fp32 bound
    against float64 over the dequantized weight; returns y."""
    _poison()
    y = ops.nvfp4_gemv(x, wp, ws, gs, b, "mma")
    _within_bound(y, x, wd, b, what)
    return y


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tile", [1, 2, 3, 4, 8, 16])
@pytest.mark.parametrize("K", [320, 2112])  # ring (K % 64 == 0) / 16-code granules
def test_gemv_mma_every_m_tile(monkeypatch, dtype, tile, K):
    """The mma kernel with tile_m rows of x per M tile (forced through the
    launch knob): M tiles smaller than the 8 / 16 rows of the mma n-tiles,
    ragged last tiles, several tiles per weight column block."""
    _need("mma")
    monkeypatch.setenv("TORCHQUANT_NVFP4_TILE_M", str(tile))
    N = 257
    x_all, wp, ws, gs, bias = _operands(40, N, K, dtype, seed=tile * 7919 + K)
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    for M in (1, 2, 5, 8, 9, 16, 17, 40):
        _mma_checked(x_all[:M].contiguous(), wp, ws, gs, bias, wd, f"tile={tile} {dtype} M={M} K={K}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("splits", [2, 3, 5])
@pytest.mark.parametrize("K", [2112, 4160, 8256, 336])  # >= 2 chunks each; 336: unaligned (knob ignored)
def test_gemv_mma_k_split_across_blocks(monkeypatch, dtype, splits, K):
    """The K split across blocks (forced through TORCHQUANT_NVFP4_SPLITK): fp32
    partials per split, summed in split order by a second kernel. Ragged N,
    M over one and several M tiles, bias, within the fp32 bound; two calls
    give the same bits (the order is fixed)."""
    _need("mma")
    monkeypatch.setenv("TORCHQUANT_NVFP4_SPLITK", str(splits))
    N = 257
    x_all, wp, ws, gs, bias = _operands(40, N, K, dtype, seed=splits * 131 + K)
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    for M in (1, 5, 8, 9, 16, 17, 40):
        x = x_all[:M].contiguous()
        for b in (None, bias):
            y = _mma_checked(x, wp, ws, gs, b, wd, f"splits={splits} {dtype} M={M} K={K} bias={b is not None}")
            assert torch.equal(ops.nvfp4_gemv(x, wp, ws, gs, b, "mma"), y)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ks", [1, 2, 4, 8])
@pytest.mark.parametrize("K", [2112, 4160])
def test_gemv_mma_group_sync_variant(monkeypatch, dtype, ks, K):
    """Per-k-warp x staging with named barriers forced on
    (TORCHQUANT_NVFP4_GROUP_SYNC=1) at every forced K-split (WN = 8 .. 1
    column warps per barrier), one- and two-n-tile M: within the bound, and
    bit-identical to the block-barrier kernel forced by -1 (same staged
    values, same order)."""
    _need("mma")
    monkeypatch.setenv("TORCHQUANT_NVFP4_KS", str(ks))
    monkeypatch.setenv("TORCHQUANT_NVFP4_SPLITK", "1")  # the unsplit kernels
    N = 257
    x_all, wp, ws, gs, bias = _operands(17, N, K, dtype, seed=ks * 977 + K)
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    for M in (1, 5, 8, 9, 16, 17):
        x = x_all[:M].contiguous()
        monkeypatch.setenv("TORCHQUANT_NVFP4_GROUP_SYNC", "1")
        y = _mma_checked(x, wp, ws, gs, bias, wd, f"group sync ks={ks} {dtype} M={M} K={K}")
        monkeypatch.setenv("TORCHQUANT_NVFP4_GROUP_SYNC", "-1")
        assert torch.equal(ops.nvfp4_gemv(x, wp, ws, gs, bias, "mma"), y), "differs from the block-barrier kernel"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ks", [1, 2, 4, 8])
@pytest.mark.parametrize("splits", [1, 3])
# chunk tails past K at every KS; 8256: up to 21 staged groups per thread at M = 4 unsplit (two
# rounds of the staging's 16 loads, the second partial)
@pytest.mark.parametrize("K", [2112, 4160, 8256])
def test_gemv_mma_x_resident(monkeypatch, dtype, ks, splits, K):
    """x resident in shared memory for the block's K range (kXRes, forced by
    TORCHQUANT_NVFP4_XRES=1) at every forced KS, unsplit and split across
    blocks, over one and several (ragged) M tiles: within the bound and
    bit-identical to the double-buffered kernel (XRES=-1: same B values, same
    mma order). M = 9 and 16 (two n-tiles) ignore the knob and must still
    agree. bf16 x stays on the bf16 loop here (TORCHQUANT_NVFP4_F16=-1); its
    fp16 loop is test_gemv_mma_x_resident_f16's."""
    _need("mma")
    monkeypatch.setenv("TORCHQUANT_NVFP4_F16", "-1")
    monkeypatch.setenv("TORCHQUANT_NVFP4_KS", str(ks))
    monkeypatch.setenv("TORCHQUANT_NVFP4_SPLITK", str(splits))
    N = 257
    x_all, wp, ws, gs, bias = _operands(16, N, K, dtype, seed=ks * 31 + splits * 7 + K)
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    for M, tile in ((1, None), (2, None), (3, None), (4, None), (5, "2"), (8, None), (8, "3"), (9, None),
                    (16, None)):
        _set_tile(monkeypatch, tile)
        x = x_all[:M].contiguous()
        for b in (None, bias):
            what = f"xres ks={ks} splits={splits} {dtype} M={M} tile={tile} K={K} bias={b is not None}"
            monkeypatch.setenv("TORCHQUANT_NVFP4_XRES", "1")
            y = _mma_checked(x, wp, ws, gs, b, wd, what)
            monkeypatch.setenv("TORCHQUANT_NVFP4_XRES", "-1")
            _poison()
            assert torch.equal(ops.nvfp4_gemv(x, wp, ws, gs, b, "mma"), y), f"{what}: differs from XRES=-1"


@pytest.mark.parametrize("ks", [1, 2, 4, 8])
@pytest.mark.parametrize("splits", [1, 3])
@pytest.mark.parametrize("K", [2112, 8256])
def test_gemv_mma_x_resident_f16(monkeypatch, ks, splits, K):
    """bf16 x through the fp16 decode and mma of the x-resident kernel (kF16,
    TORCHQUANT_NVFP4_F16=1; off by default): within the bound, and the same
    bits as the fp16 loop run without the exactness check (F16=2) when every x
    value converts to fp16 exactly, edge values included (+-2^-17, -65280, zeros),
    so those blocks did run fp16. With one value fp16 cannot hold (too large,
    too small for its bits, a bf16 subnormal) the blocks whose K range holds it
    stage bf16 again and run the bf16 loop: within the bound, unsplit the same
    bits as F16=-1, while the unchecked loop turns the large value into inf. F16=2 skips the
    check only with TORCHQUANT_TESTING=1; without it, it is the checked loop."""
    _need("mma")
    monkeypatch.setenv("TORCHQUANT_NVFP4_KS", str(ks))
    monkeypatch.setenv("TORCHQUANT_NVFP4_SPLITK", str(splits))
    monkeypatch.setenv("TORCHQUANT_NVFP4_XRES", "1")
    monkeypatch.setenv("TORCHQUANT_TESTING", "1")  # lets F16=2 skip the check
    N = 257
    x_all, wp, ws, gs, bias = _operands(4, N, K, torch.bfloat16, seed=ks * 53 + splits * 11 + K)
    # randn can give |x| < 2^-17 (ks = 1, splits = 1, K = 8256 does: row 2), which sends that
    # x's blocks to the bf16 loop; keep the bit comparisons below about the values placed here
    x_all[x_all.abs() < 2.0**-10] = 2.0**-10
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)

    def run(mode, x, b):
        monkeypatch.setenv("TORCHQUANT_NVFP4_F16", mode)
        _poison()
        return ops.nvfp4_gemv(x, wp, ws, gs, b, "mma")

    def checked(mode, x, b, what):
        monkeypatch.setenv("TORCHQUANT_NVFP4_F16", mode)
        return _mma_checked(x, wp, ws, gs, b, wd, f"{what} F16={mode}")

    bad_values = {"large": 1.0e5, "tiny": 2.0**-18 * (1 + 2.0**-7), "subnormal": 1.0e-39}
    for M in (1, 2, 3, 4):
        x = x_all[:M].clone()  # a copy: the edge values below stay out of x_all
        x[0, 5], x[M - 1, 9], x[M - 1, K - 3], x[0, 7] = 2.0**-17, -(2.0**-17), -65280.0, 0.0
        for b in (None, bias):
            what = f"f16 ks={ks} splits={splits} M={M} K={K} bias={b is not None}"
            y16 = checked("1", x, b, what)
            assert torch.equal(run("2", x, b), y16), f"{what}: not the fp16 loop"
            checked("-1", x, b, what)
        for name, v in bad_values.items():
            # in every row: M may run as several one-row tiles (N = 257), each block staging its own
            xb = x.clone()
            xb[:, K // 2 + 1] = v
            assert (xb[:, K // 2 + 1] != 0.0).all()
            what = f"f16 fallback ({name}) ks={ks} splits={splits} M={M} K={K}"
            y = checked("1", xb, None, what)
            if splits == 1:
                assert torch.equal(y, run("-1", xb, None)), f"{what}: not the bf16 loop"
            if name == "large":
                assert not torch.isfinite(run("2", xb, None)).all(), f"{what}: fp16 held 1e5?"
                # without TORCHQUANT_TESTING, 2 is checked like 1: no inf for a user's stray 2
                monkeypatch.delenv("TORCHQUANT_TESTING")
                assert torch.equal(run("2", xb, None), y), f"{what}: F16=2 unchecked without TESTING"
                monkeypatch.setenv("TORCHQUANT_TESTING", "1")


def _mma_kernel_args(names):
    """Template arguments of the one nvfp4_gemv_mma_kernel launched, as strings."""
    found = [n for n in names if "nvfp4_gemv_mma_kernel<" in n]
    assert len(found) == 1, names
    inner = found[0].split("nvfp4_gemv_mma_kernel<", 1)[1].rsplit(">(", 1)[0]
    return [a.strip() for a in inner.split(",")]


@pytest.mark.parametrize("M,tile", [(1, None), (4, "1"), (2, "2"), (4, "4")])
def test_gemv_mma_f16_knob(monkeypatch, M, tile):
    """kF16 (the x-resident kernel's seventh template argument, before kLayout) is off by default;
    TORCHQUANT_NVFP4_F16=1 takes it for bf16 x on tiles of any size; -1 and 3 (an
    unknown value) do not; fp16 x never has it."""
    _need("mma")
    monkeypatch.setenv("TORCHQUANT_NVFP4_XRES", "1")
    _set_tile(monkeypatch, tile)
    N, K = 4096, 4096
    for dtype in DTYPES:
        x, wp, ws, gs, bias = _operands(M, N, K, dtype, seed=M * 3 + (tile is None))
        for knob, want in (("auto", "0"), ("1", "1"), ("3", "0"), ("-1", "0")):
            if knob == "auto":
                monkeypatch.delenv("TORCHQUANT_NVFP4_F16", raising=False)
            else:
                monkeypatch.setenv("TORCHQUANT_NVFP4_F16", knob)
            args = _mma_kernel_args(kernels_launched(lambda: ops.nvfp4_gemv(x, wp, ws, gs, bias, "mma")))
            assert args[5] in ("true", "1", "(bool)1"), args  # kXRes
            assert args[6] == (want if dtype == torch.bfloat16 else "0"), (dtype, M, tile, knob, args)


@pytest.mark.parametrize("xres", ["1", "-1"])
@pytest.mark.parametrize("N,K,M", [(4096, 4096, 1), (4096, 4096, 8), (6144, 4096, 8), (257, 4160, 3)])
def test_gemv_mma_spread_same_bits(monkeypatch, xres, N, K, M):
    """TORCHQUANT_NVFP4_SPREAD=1 / -1 (a grid of <= one block per SM asks for more
    than half an SM's shared memory, or not) only moves blocks between SMs: the
    same bits, with x resident or double-buffered, and within the bound; so does
    TORCHQUANT_NVFP4_SMEM_MIN (padding to one block per SM)."""
    _need("mma")
    monkeypatch.setenv("TORCHQUANT_NVFP4_XRES", xres)
    x, wp, ws, gs, bias = _operands(M, N, K, torch.bfloat16, seed=N + M)
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    monkeypatch.setenv("TORCHQUANT_NVFP4_SPREAD", "1")
    y = _mma_checked(x, wp, ws, gs, bias, wd, f"spread xres={xres} {N}x{K} M={M}")
    monkeypatch.setenv("TORCHQUANT_NVFP4_SPREAD", "-1")
    _poison()
    assert torch.equal(ops.nvfp4_gemv(x, wp, ws, gs, bias, "mma"), y)
    # The occupancy sweep knob (one block per SM by padding the shared memory): same bits.
    monkeypatch.setenv("TORCHQUANT_NVFP4_SMEM_MIN", "120000")
    _poison()
    assert torch.equal(ops.nvfp4_gemv(x, wp, ws, gs, bias, "mma"), y)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("N,K,M,splits", [(256, 8192, 8, 2),     # 4 M tiles x 8 blocks, 4 chunks
                                          (300, 8256, 16, 2),    # 40 blocks, 5 chunks: 3 + 2
                                          (4096, 4096, 1, 1)])   # 128 blocks, 2 chunks: no split
def test_gemv_mma_split_rule(monkeypatch, dtype, N, K, M, splits):
    """The automatic K split across blocks (mma_config): on a small grid with
    long K streams the default launch is the S-way split, so its bits equal
    the forced TORCHQUANT_NVFP4_SPLITK=S launch, and it is within the bound.
    The expected S follow from the rule for 132 SMs (H100 / H200 SXM)."""
    _need("mma")
    if torch.cuda.get_device_properties(0).multi_processor_count != 132:
        pytest.skip("the expected splits are worked out for 132 SMs")
    x, wp, ws, gs, bias = _operands(M, N, K, dtype, seed=N + K + M)
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    y = _mma_checked(x, wp, ws, gs, bias, wd, f"auto split N={N} K={K} M={M} {dtype}")
    monkeypatch.setenv("TORCHQUANT_NVFP4_SPLITK", str(splits))
    assert torch.equal(ops.nvfp4_gemv(x, wp, ws, gs, bias, "mma"), y), f"auto differs from SPLITK={splits}"


@pytest.mark.parametrize("N,K,M,ks,waves_ks", [(6144, 4096, 1, 4, 8),    # 96 blocks, not 192
                                              (14336, 4096, 2, 2, 4),   # 112, not 224
                                              (4096, 4096, 1, 8, 8),    # 128 either way
                                              (28672, 4096, 1, 2, 2),   # KS = 1 is not taken
                                              (6144, 4096, 8, 8, 8)])   # nor 8-row tiles
def test_gemv_mma_ks_rule(monkeypatch, N, K, M, ks, waves_ks):
    """The K split of the mma GEMV (mma_config_one_pass): for tiles of <= 4 rows, the KS >= 2
    with the fewest weight rows on the busiest SM, the smaller on a tie;
    TORCHQUANT_NVFP4_KS_RULE=waves, the wave rule alone. Each default launch has the bits
    of the forced TORCHQUANT_NVFP4_KS launch it should equal (another KS sums K in another
    order, so other bits: checked), within the bound. The expected KS follow from the rule
    for 132 SMs (H100 / H200 SXM)."""
    _need("mma")
    if torch.cuda.get_device_properties(0).multi_processor_count != 132:
        pytest.skip("the expected K splits are worked out for 132 SMs")
    x, wp, ws, gs, bias = _operands(M, N, K, torch.bfloat16, seed=N + K + M)
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    y = _mma_checked(x, wp, ws, gs, bias, wd, f"auto KS {N}x{K} M={M}")
    monkeypatch.setenv("TORCHQUANT_NVFP4_KS_RULE", "waves")
    _poison()
    y_waves = ops.nvfp4_gemv(x, wp, ws, gs, bias, "mma")
    monkeypatch.delenv("TORCHQUANT_NVFP4_KS_RULE")
    other = 1 if ks == 2 else 2  # a forced KS is taken up to the wave rule's (always 1)
    forced = {}
    for k in sorted({ks, waves_ks, other}):
        monkeypatch.setenv("TORCHQUANT_NVFP4_KS", str(k))
        _poison()
        forced[k] = ops.nvfp4_gemv(x, wp, ws, gs, bias, "mma")
    assert not torch.equal(forced[other], forced[ks]), f"KS = {other} and {ks} gave the same bits"
    assert torch.equal(y, forced[ks]), f"auto is not KS = {ks}"
    assert torch.equal(y_waves, forced[waves_ks]), f"the wave rule is not KS = {waves_ks}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemv_auto(dtype):
    x, wp, ws, gs, bias = _operands(3, 96, 1024, dtype, seed=7)
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    y = ops.nvfp4_gemv(x, wp, ws, gs, bias, "auto")
    assert ref.worst_fraction(y, ref.linear_ref(x, wd, bias), ref.fp32_accum_bound(x, wd, bias, dtype)) <= 1.0


@pytest.mark.parametrize("path", PATHS)
def test_gemv_unaligned_views(path):
    """Views at odd offsets: x (copied to an aligned buffer), a weight base that
    is only 8-byte aligned and 1-byte aligned scales (narrow-load variants)."""
    _need(path)
    M, N, K = 5, 33, 320
    x_all, wp_all, ws_all, gs, _ = _operands(M + 1, N + 1, K + 16, torch.float16, seed=3)
    x = x_all.reshape(-1)[3 : 3 + M * K].view(M, K)  # 6-byte offset
    wp = wp_all.reshape(-1)[8 : 8 + N * K // 2].view(N, K // 2)  # 8-byte offset
    ws = ws_all.reshape(-1)[1 : 1 + N * K // 16].view(N, K // 16)  # 1-byte offset
    assert x.data_ptr() % 16 != 0 and wp.data_ptr() % 16 == 8 and ws.data_ptr() % 2 == 1
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    y = ops.nvfp4_gemv(x, wp, ws, gs, None, path)
    assert ref.worst_fraction(y, ref.linear_ref(x, wd), ref.fp32_accum_bound(x, wd, None, torch.float16)) <= 1.0


@pytest.mark.parametrize("path,splitk,K", [("fma", "", 2048), ("mma", "", 2048), ("mma", "4", 4160),
                                           ("tile", "", 2048)])
def test_gemv_deterministic_and_graph_capturable(monkeypatch, path, splitk, K):
    """Same inputs, same bits (fixed reduction order); the launch needs no host
    sync (the global scale is read on the device), so it replays in a graph
    and picks up a new global scale written in place. Also with the K split
    across blocks (TORCHQUANT_NVFP4_SPLITK), whose fp32 workspace is
    allocated inside the op during capture."""
    _need(path)
    if splitk:
        monkeypatch.setenv("TORCHQUANT_NVFP4_SPLITK", splitk)
    x, wp, ws, gs, bias = _operands(4, 300, K, torch.bfloat16, seed=11)
    y0 = ops.nvfp4_gemv(x, wp, ws, gs, bias, path)
    assert torch.equal(ops.nvfp4_gemv(x, wp, ws, gs, bias, path), y0)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        ops.nvfp4_gemv(x, wp, ws, gs, bias, path)  # warm-up outside capture
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y_g = ops.nvfp4_gemv(x, wp, ws, gs, bias, path)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(y_g, y0)
    gs.mul_(2.0)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(y_g, ops.nvfp4_gemv(x, wp, ws, gs, bias, path))


# ------------------------------------------------- (b3) the wgmma GEMV ----
# path "wgmma" (sm_90, K % 256 == 0): 128 features x 16 tokens per tile, 256-wide K stages,
# the weight decoded into the wgmma A operand, x permuted into the B layout by the producer
# warpgroup. Every tile, split-K on and off, M = 1..16 and past one token tile.
@WGMMA
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tile", WGMMA_TILES)
def test_gemv_wgmma_one_hot_decodes_every_byte(monkeypatch, dtype, tile):
    """x = I (M = K = 512: 32 token tiles): every byte value with signed and subnormal block
    scales comes back bit for bit, through the producer's x permutation and the consumers'
    decode and scale fold."""
    monkeypatch.setenv("TORCHQUANT_NVFP4_WGMMA_TILE", tile)
    _one_hot_check("wgmma", dtype, 200, 512, seed=513)


@WGMMA
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tile", WGMMA_TILES)
@pytest.mark.parametrize("splits", ["", "1", "3"])
@pytest.mark.parametrize("N,K", [(1, 256), (17, 768), (257, 4096), (1000, 2048)])
def test_gemv_wgmma_forced(monkeypatch, dtype, tile, splits, N, K):
    monkeypatch.setenv("TORCHQUANT_NVFP4_WGMMA_TILE", tile)
    monkeypatch.setenv("TORCHQUANT_DQ_WGMMA_SPLITS", splits)
    _m_sweep_check("wgmma", dtype, N, K, seed=N * 7919 + K, label=f"wgmma {tile} splits={splits!r}")


@WGMMA
@pytest.mark.parametrize("K,M,want", [(8192, 8, "3"), (8192, 16, "3"), (4096, 8, "1"), (8192, 17, "1")])
def test_gemv_wgmma_split_rule(monkeypatch, K, M, want):
    """The wgmma GEMV's K split (dq_gemm_sm90a.cu gemv_splits) on 2/3 of the SMs' worth of feature
    tiles: unsplit by choose_splits (more than half the SMs), split 3 ways (the largest S with
    tiles x S <= 2 x SMs, > 1.75 x SMs) where every split keeps >= 1536 of K and M <= 16; not at
    K = 4096 (1365 per split) nor with two token tiles (M = 17). Auto is bit-identical to the
    split it should pick, forced, and within the bound; 1 and 3 splits differ in their bits (so
    the equality names the split)."""
    monkeypatch.delenv("TORCHQUANT_NVFP4_WGMMA_TILE", raising=False)
    tiles = 2 * sm_count() // 3
    assert 4 * tiles * 3 > 7 * sm_count() and 2 * sm_count() // tiles == 3
    N = 128 * tiles - 5
    x, wp, ws, gs, bias = _operands(M, N, K, torch.bfloat16, seed=K + M)
    wl = ops.nvfp4_relayout(wp, 1)
    monkeypatch.delenv("TORCHQUANT_DQ_WGMMA_SPLITS", raising=False)
    y = ops.nvfp4_gemv(x, wl, ws, gs, bias, "wgmma", 1)
    forced = {}
    for s in ("1", "3"):
        monkeypatch.setenv("TORCHQUANT_DQ_WGMMA_SPLITS", s)
        forced[s] = ops.nvfp4_gemv(x, wl, ws, gs, bias, "wgmma", 1)
    assert not torch.equal(forced["1"], forced["3"])
    assert torch.equal(y, forced[want]), (K, M, want)
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    bound = ref.fp32_accum_bound(x, wd, bias, torch.bfloat16)
    assert ref.worst_fraction(y, ref.linear_ref(x, wd, bias), bound) <= 1.0


@WGMMA
@pytest.mark.parametrize("knob", ["", "33", "3"])
def test_gemv_auto_takes_wgmma_from_m5(monkeypatch, knob):
    """auto on sm_90: the mma kernel up to M = 4, the wgmma GEMV at M = 5..32 when K % 256 == 0
    (TORCHQUANT_NVFP4_WGMMA_MIN_M moves the threshold; 33 = never), the mma kernel when K is
    not a multiple of 256 and from M = 33; the result within the bound either way. The upper
    edge is QuantLinear's NVFP4_GEMV_WGMMA_MAX_M, so the C++ rule and the Python one cannot drift
    apart unnoticed. (N = 300's mma grid has several M tiles at M = 5..8, so the x-resident
    exception of the next test does not apply.)"""
    from torchquant.nn.dispatch import NVFP4_GEMV_WGMMA_MAX_M as hi

    monkeypatch.setenv("TORCHQUANT_NVFP4_WGMMA_MIN_M", knob)
    lo = int(knob) if knob else 5
    for K in (1024, 320):
        x_all, wp, ws, gs, bias = _operands(40, 300, K, torch.bfloat16, seed=K)
        wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
        for M in (1, lo - 1, lo, 8, 16, hi, hi + 1, 40):
            if not 1 <= M <= 40:
                continue
            x = x_all[:M].contiguous()
            out = {}
            names = kernels_launched(lambda: out.setdefault("y", ops.nvfp4_gemv(x, wp, ws, gs, bias, "auto")))
            wg = any("fp4_gemv_sm90a_kernel" in n for n in names)
            assert wg == (K % 256 == 0 and lo <= M <= hi), (knob, K, M, names)
            bound = ref.fp32_accum_bound(x, wd, bias, torch.bfloat16)
            assert ref.worst_fraction(out["y"], ref.linear_ref(x, wd, bias), bound) <= 1.0


@WGMMA
def test_gemv_auto_m5_to_8_takes_resident_x_on_one_wave(monkeypatch):
    """At M = 5..8 auto runs the mma kernel with x resident (not the wgmma GEMV) where mma_config
    gives it one M tile, K unsplit and at most one block per SM (here SMs - 4 blocks of 64 columns,
    KS = 4, K = 4096 in 4 chunks); the wgmma GEMV where the grid has more blocks than SMs (SMs + 4)
    or splits K (half the SMs, K = 8192), at M = 9, and with TORCHQUANT_NVFP4_XRES=-1. Auto is
    bit-identical to the path it names, forced, and within the bound; layouts 0 and 1."""
    for knob in ("TORCHQUANT_NVFP4_WGMMA_MIN_M", "TORCHQUANT_NVFP4_XRES", "TORCHQUANT_NVFP4_TILE_M",
                 "TORCHQUANT_NVFP4_KS", "TORCHQUANT_NVFP4_SPLITK", "TORCHQUANT_NVFP4_KS_RULE"):
        monkeypatch.delenv(knob, raising=False)
    sms = sm_count()
    cases = [  # (N, K, M, resident mma wanted)
        (64 * (sms - 4) - 3, 4096, 5, True),
        (64 * (sms - 4) - 3, 4096, 8, True),
        (64 * (sms - 4) - 3, 4096, 9, False),
        (64 * (sms + 4) - 3, 4096, 8, False),
        (64 * (sms // 2 - 2), 8192, 6, False),
    ]
    for N, K, M, want in cases:
        x, wp, ws, gs, bias = _operands(M, N, K, torch.bfloat16, seed=N + M)
        wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
        bound = ref.fp32_accum_bound(x, wd, bias, torch.bfloat16)
        for layout in (0, 1):
            w = wp if layout == 0 else ops.nvfp4_relayout(wp, 1)
            out = {}
            names = kernels_launched(lambda: out.setdefault("y", ops.nvfp4_gemv(x, w, ws, gs, bias, "auto", layout)))
            wg = any("fp4_gemv_sm90a_kernel" in n for n in names)
            assert wg == (not want), (N, K, M, layout, names)
            if want:
                assert _mma_kernel_args(names)[5] in ("true", "1", "(bool)1"), names  # kXRes
            forced = ops.nvfp4_gemv(x, w, ws, gs, bias, "mma" if want else "wgmma", layout)
            assert torch.equal(out["y"], forced), (N, K, M, layout)
            assert ref.worst_fraction(out["y"], ref.linear_ref(x, wd, bias), bound) <= 1.0
        if want:
            monkeypatch.setenv("TORCHQUANT_NVFP4_XRES", "-1")
            names = kernels_launched(lambda: ops.nvfp4_gemv(x, wp, ws, gs, bias, "auto"))
            assert any("fp4_gemv_sm90a_kernel" in n for n in names), (N, K, M, names)
            monkeypatch.delenv("TORCHQUANT_NVFP4_XRES")


@WGMMA
def test_gemv_wgmma_views_graph_and_refusals(monkeypatch):
    """Misaligned views are copied, the launch replays in a CUDA graph (and reads a new global
    scale written in place), split or not, and unsupported requests raise clearly."""
    M, N, K = 5, 130, 1024
    x_all, wp_all, ws_all, gs, bias = _operands(M + 1, N + 1, K + 256, torch.bfloat16, seed=5)
    x = x_all.reshape(-1)[3 : 3 + M * K].view(M, K)
    wp = wp_all.reshape(-1)[8 : 8 + N * K // 2].view(N, K // 2)
    ws = ws_all.reshape(-1)[1 : 1 + N * K // 16].view(N, K // 16)
    assert x.data_ptr() % 16 != 0 and wp.data_ptr() % 16 == 8 and ws.data_ptr() % 2 == 1
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    b = bias[:N]
    y = ops.nvfp4_gemv(x, wp, ws, gs, b, "wgmma")
    assert ref.worst_fraction(y, ref.linear_ref(x, wd, b), ref.fp32_accum_bound(x, wd, b, torch.bfloat16)) <= 1.0
    for splits in ("1", "4"):
        monkeypatch.setenv("TORCHQUANT_DQ_WGMMA_SPLITS", splits)
        xc, wc, sc = x.contiguous(), wp.contiguous(), ws.contiguous()
        y0 = ops.nvfp4_gemv(xc, wc, sc, gs, b, "wgmma")
        assert torch.equal(ops.nvfp4_gemv(xc, wc, sc, gs, b, "wgmma"), y0)  # deterministic
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            ops.nvfp4_gemv(xc, wc, sc, gs, b, "wgmma")
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y_g = ops.nvfp4_gemv(xc, wc, sc, gs, b, "wgmma")
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(y_g, y0)
        gs2 = gs.clone()
        gs.mul_(2.0)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(y_g, ops.nvfp4_gemv(xc, wc, sc, gs, b, "wgmma"))
        gs.copy_(gs2)
    monkeypatch.delenv("TORCHQUANT_DQ_WGMMA_SPLITS")
    x3, wp3, ws3, gs3, _ = _operands(2, 8, 320, torch.float16, seed=9)
    with pytest.raises(RuntimeError, match="K % 256 == 0"):
        ops.nvfp4_gemv(x3, wp3, ws3, gs3, None, "wgmma")
    monkeypatch.setenv("TORCHQUANT_NVFP4_WGMMA_TILE", "16x3")
    with pytest.raises(RuntimeError, match="is not one of 16x2s3, 16x2s4, 16x1"):
        ops.nvfp4_gemv(x.contiguous(), wp.contiguous(), ws.contiguous(), gs, None, "wgmma")


# --------------------------------------------------- (c) quantize / dequant --
def _quant_inputs():
    g = _gen(5)
    cases = []
    for N, K in [(1, 16), (7, 48), (33, 160), (64, 4112)]:
        w = torch.randn(N, K, generator=g) * torch.exp(torch.empty(N, K // 16).uniform_(-8, 8, generator=g)).repeat_interleave(16, 1)
        if K >= 48:
            w[:, 16:32] = 0.0  # zero blocks -> scale 0, codes 0
            w[0, 32:48] *= 1e-12  # a block whose e4m3 scale underflows to 0
        cases.append(w)
    # Ties: global 1 (amax 2688), block scale 4, so w / d lands on every midpoint,
    # and a negative value that rounds to zero.
    t = torch.zeros(2, 32)
    t[0, 0] = 2688.0
    t[1, :16] = torch.tensor([24.0, 1, 3, 5, 7, 10, 14, 20, -1, -3, -5, -7, -10, -14, -20, -0.4])
    t[1, 16:] = torch.tensor([-24.0, 0.9999, 1.0001, 2.9999, 3.0001, -0.999, 6, 8, 12, 16, -2, -4, -6, -8, -12, -16])
    cases.append(t)
    cases.append(torch.zeros(3, 32))  # amax 0 -> global 1, all codes 0
    cases.append(torch.full((2, 32), -1e-44))  # fp32 subnormal: amax / 2688 underflows -> global 1
    return cases


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_quantize_matches_cpu_bit_exact(dtype):
    for w in _quant_inputs():
        w = w.to(dtype)
        p, s, g = ops.quantize_nvfp4(w)
        _poison()
        pc, sc, gc = ops.quantize_nvfp4(w.cuda())
        assert pc.dtype == torch.uint8 and sc.dtype == torch.float8_e4m3fn and gc.dtype == torch.float32
        assert pc.shape == p.shape and sc.shape == s.shape and gc.shape == g.shape == ()
        assert torch.equal(pc.cpu(), p), f"codes differ for {tuple(w.shape)} {dtype}"
        assert torch.equal(sc.cpu().view(torch.uint8), s.view(torch.uint8))
        assert torch.equal(gc.cpu().view(torch.int32), g.view(torch.int32))
        for od in (torch.float32, torch.float16, torch.bfloat16):
            d_cpu = ops.dequantize_nvfp4(p, s, g, od)
            d_gpu = ops.dequantize_nvfp4(pc, sc, gc, od).cpu()
            assert torch.equal(d_gpu.view(INT_VIEW[od]), d_cpu.view(INT_VIEW[od]))


def test_quantize_then_gemv_roundtrip():
    """quantize on the GPU then both GEMV paths against the original weight,
    gated by the fp32-accumulation bound over the dequantized weight."""
    g = _gen(9)
    w = torch.randn(130, 512, generator=g).cuda()
    x = torch.randn(6, 512, generator=g).to(torch.bfloat16).cuda()
    p, s, gs = ops.quantize_nvfp4(w)
    wd = ref.dequantize_nvfp4_ref(p, s, gs)
    for path in ["auto"] + PATHS:
        if path == "mma" and torch.cuda.get_device_capability() < (8, 0):
            continue
        y = ops.nvfp4_gemv(x, p, s, gs, None, path)
        assert ref.worst_fraction(y, ref.linear_ref(x, wd), ref.fp32_accum_bound(x, wd, None, torch.bfloat16)) <= 1.0


# ------------------------------------------------------------ (d) errors ----
def test_bad_inputs_raise():
    x, wp, ws, gs, bias = _operands(2, 8, 64, torch.float16, seed=2)
    cases = [
        (lambda: ops.nvfp4_gemv(x, wp, ws, gs, None, "cpu"), "not a CUDA path"),
        (lambda: ops.nvfp4_gemv(x, wp, ws, gs, None, "gemv"), "not a CUDA path"),
        # K = 64: on sm_90 with _C_sm90a "needs K % 256 == 0", elsewhere "needs torchquant._C_sm90a"
        (lambda: ops.nvfp4_gemv(x, wp, ws, gs, None, "wgmma"), "path 'wgmma' needs"),
        (lambda: ops.nvfp4_gemv(x.float(), wp, ws, gs, None, "auto"), "x must be float16 or bfloat16"),
        (lambda: ops.nvfp4_gemv(x, wp[:, :16].contiguous(), ws, gs, None, "auto"), "w_packed must be"),
        (lambda: ops.nvfp4_gemv(x, wp, ws.float(), gs, None, "auto"), "w_scale must be"),
        (lambda: ops.nvfp4_gemv(x, wp, ws[:, :2].contiguous(), gs, None, "auto"), "w_scale must be"),
        (lambda: ops.nvfp4_gemv(x, wp, ws, torch.ones(2, device="cuda"), None, "auto"), "global_scale must hold one element"),
        (lambda: ops.nvfp4_gemv(x, wp, ws, gs.cpu(), None, "auto"), "is on"),
        (lambda: ops.nvfp4_gemv(x, wp, ws, gs, bias.float(), "auto"), "bias dtype"),
        (lambda: ops.nvfp4_gemv(x, wp, ws, gs, bias[:4], "auto"), "bias must be"),
        (lambda: ops.nvfp4_gemv(x[:, :40].contiguous(), wp, ws, gs, None, "auto"), "multiple of 16"),
        (lambda: ops.nvfp4_gemv(x[:, ::2], wp, ws, gs, None, "auto"), "contiguous"),
        (lambda: ops.nvfp4_gemv(x[:0], wp, ws, gs, None, "auto"), "empty"),
        (lambda: ops.quantize_nvfp4(torch.randn(4, 40, device="cuda")), "multiple of 16"),
        (lambda: ops.quantize_nvfp4(torch.randn(4, 32, device="cuda").to(torch.int32)), "w must be"),
        (lambda: ops.dequantize_nvfp4(wp, ws[:, :2].contiguous(), gs, None), "scale must be"),
        (lambda: ops.dequantize_nvfp4(wp, ws, gs, torch.int32), "out_dtype must be"),
    ]
    for fn, msg in cases:
        with pytest.raises(RuntimeError, match=msg):
            fn()


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_quantize_rejects_nonfinite(bad):
    w = torch.randn(4, 32, device="cuda")
    w[2, 7] = bad
    with pytest.raises(RuntimeError, match="NaN or Inf"):
        ops.quantize_nvfp4(w)


def test_mma_forced_below_sm80_raises():
    if torch.cuda.get_device_capability() >= (8, 0):
        pytest.skip("this device has mma.m16n8k16")
    x, wp, ws, gs, _ = _operands(1, 8, 64, torch.float16, seed=1)
    with pytest.raises(RuntimeError, match="needs mma.sync"):
        ops.nvfp4_gemv(x, wp, ws, gs, None, "mma")


# ---------------------------------------------------- layouts 1, 2 and 3 --
# nvfp4_relayout(w, 1) / (w, 2): the bf16 / fp16 decode orders (docs/nvfp4_gemv.md 23), read with
# x of that dtype; (w, 3): layout 1's decode on adjacent codes (bf16), which the mma and wgmma
# GEMVs read with x unpermuted and the direct GEMV reads (auto's choice by direct_rule:
# conftest.nvfp4_direct_by_auto). Layouts 1 and 2 decode to layout 0's pairs (c, c + 4) / (c, c + 2):
# layout 0's bits. Layout 3's pairs are adjacent codes, so each mma sums other products (codes
# 0..3 and 4..7 of a word where layout 0's sum 0, 1, 4, 5 and 2, 3, 6, 7): other bits, held to
# the fp32-accumulation bound and to the forced path's bits instead.
LAYOUTS = [(1, torch.bfloat16), (2, torch.float16), (3, torch.bfloat16)]
LAYOUT_IDS = ["l1-bf16", "l2-fp16", "l3-bf16"]

LAYOUT1_FORMS = {
    "auto": {},
    "xres": {"TORCHQUANT_NVFP4_XRES": "1"},
    "double_buffered": {"TORCHQUANT_NVFP4_XRES": "-1", "TORCHQUANT_NVFP4_SPLITK": "1"},
    "group_sync": {"TORCHQUANT_NVFP4_XRES": "-1", "TORCHQUANT_NVFP4_SPLITK": "1",
                   "TORCHQUANT_NVFP4_GROUP_SYNC": "1", "TORCHQUANT_NVFP4_KS": "2"},
    "split_xres": {"TORCHQUANT_NVFP4_XRES": "1", "TORCHQUANT_NVFP4_SPLITK": "3"},
    "split": {"TORCHQUANT_NVFP4_XRES": "-1", "TORCHQUANT_NVFP4_SPLITK": "3"},
    "ks8": {"TORCHQUANT_NVFP4_KS": "8", "TORCHQUANT_NVFP4_SPLITK": "1"},
}


@pytest.mark.parametrize("layout,dtype", LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("form", list(LAYOUT1_FORMS))
@pytest.mark.parametrize("K", [1072, 2112, 8256])  # 16-code granules / ring, 1 and 3+ chunks
def test_gemv_layout_same_bits_every_form(monkeypatch, layout, dtype, form, K):
    """nvfp4_gemv(layout=L) on nvfp4_relayout(w, L): the layout-L kernels (last template
    argument L) give the bits of the layout-0 mma kernel on every form (their decode yields the
    same pairs), at M = 1..16 and beyond, ragged M tiles, bias or none, on a poisoned
    allocator; layout 0 is also within the bound. auto with a layout runs mma here."""
    _need("mma")
    for k, v in LAYOUT1_FORMS[form].items():
        monkeypatch.setenv(k, v)
    N = 257
    x_all, wp, ws, gs, bias = _operands(40, N, K, dtype, seed=K * 13 + len(form))
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    w1 = ops.nvfp4_relayout(wp, layout)
    path = "auto" if form == "auto" else "mma"
    for M, tile in ((1, None), (2, None), (3, None), (4, None), (5, None), (8, None), (8, "3"), (9, None),
                    (13, None), (16, None), (17, None), (40, None)):
        _set_tile(monkeypatch, tile)
        x = x_all[:M].contiguous()
        for b in (None, bias):
            what = f"layout {layout} {form} M={M} tile={tile} K={K} bias={b is not None}"
            y0 = _mma_checked(x, wp, ws, gs, b, wd, what)
            _poison()
            y1 = ops.nvfp4_gemv(x, w1, ws, gs, b, path, layout)
            if layout == 3:
                _within_bound(y1, x, wd, b, what)
                if path == "auto":  # K % 128 != 0 here: no direct GEMV, auto is the mma GEMV
                    _poison()
                    assert torch.equal(ops.nvfp4_gemv(x, w1, ws, gs, b, "mma", layout), y1), what
            else:
                assert torch.equal(y1, y0), what
        args = _mma_kernel_args(kernels_launched(lambda: ops.nvfp4_gemv(x, w1, ws, gs, None, path, layout)))
        assert args[7] == str(layout), (form, M, args)


@pytest.mark.parametrize("layout,dtype", LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("N,K,M", [(1, 4096, 1), (15, 4096, 3), (4096, 4096, 1), (4096, 4096, 16),
                                   (6144, 4096, 8), (28672, 1024, 4)])
def test_gemv_layout_default_launches(layout, dtype, N, K, M):
    """The default launch rules (x residency, KS, K split, spread) with a layout on real layer
    widths and tiny N: the layout-0 bits. Also through an unaligned weight view (copied by the
    op) and replayed in a CUDA graph."""
    _need("mma")
    x, wp, ws, gs, bias = _operands(M, N, K, dtype, seed=N + K + M)
    w1 = ops.nvfp4_relayout(wp, layout)
    y0 = ops.nvfp4_gemv(x, wp, ws, gs, bias, "mma")
    _poison()
    y1 = ops.nvfp4_gemv(x, w1, ws, gs, bias, "mma", layout)
    if layout == 3:  # other partial sums (above): the bound, then its own paths' bits
        _within_bound(y1, x, ref.dequantize_nvfp4_ref(wp, ws, gs), bias, f"layout 3 mma {N}x{K} M={M}")
        y0 = y1
    assert torch.equal(y1, y0)
    # auto: mma, or on sm_90 the wgmma GEMV (M = 5..32, K % 256 == 0), as layout 0's path; layout
    # 3: the direct GEMV where direct_rule takes it
    out = {}
    names = kernels_launched(lambda: out.setdefault("y", ops.nvfp4_gemv(x, w1, ws, gs, bias, "auto", layout)))
    wg = any("fp4_gemv_sm90a_kernel" in n for n in names)
    direct = any("nvfp4_gemv_direct_" in n for n in names)  # the 16-row or the row-tile kernel
    assert direct == nvfp4_direct_by_auto(layout, M, N, K), names
    if direct:
        assert torch.equal(out["y"], ops.nvfp4_gemv(x, w1, ws, gs, bias, "direct", layout)), names
    elif layout == 3:
        assert torch.equal(out["y"], ops.nvfp4_gemv(x, w1, ws, gs, bias, "wgmma" if wg else "mma", layout)), names
    else:
        assert torch.equal(out["y"], ops.nvfp4_gemv(x, wp, ws, gs, bias, "wgmma") if wg else y0), names
    buf = torch.empty(w1.numel() + 4, dtype=torch.uint8, device="cuda")
    view = buf[4:].view(w1.shape)  # base 4 bytes into the storage: not 8-aligned
    view.copy_(w1)
    assert torch.equal(ops.nvfp4_gemv(x, view, ws, gs, bias, "mma", layout), y0)
    graph_replay_matches_eager(lambda: ops.nvfp4_gemv(x, w1, ws, gs, bias, "auto", layout), replays=2, poison=True)
    graph_replay_matches_eager(lambda: ops.nvfp4_gemv(x, w1, ws, gs, bias, "mma", layout), replays=2, poison=True)


@pytest.mark.parametrize("layout", [1, 2, 3])
def test_relayout_cuda_every_word_bit(layout):
    """nvfp4_relayout on the GPU moves each single set bit of a word where the CPU op does,
    at every word position of a row (the map is a bit permutation, so single bits decide it)."""
    K = 16 * 33
    rows = []
    for b in range(32):
        row = torch.zeros(K // 2, dtype=torch.uint8)
        row.view(torch.int32).fill_((1 << b) if b < 31 else -(1 << 31))  # bit b of every word
        rows.append(row)
    wp = torch.stack(rows)
    for inverse in (False, True):
        got = ops.nvfp4_relayout(wp.cuda(), layout, inverse)
        assert torch.equal(got.cpu(), ops.nvfp4_relayout(wp, layout, inverse)), inverse


@WGMMA
@pytest.mark.parametrize("layout,dtype", LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("tile", WGMMA_TILES)
@pytest.mark.parametrize("splits", ["", "3"])
@pytest.mark.parametrize("N,K", [(17, 768), (257, 4096), (1000, 2048)])
def test_gemv_wgmma_layout_same_bits(monkeypatch, layout, dtype, tile, splits, N, K):
    """The Hopper wgmma GEMV on a layout-L weight (path "wgmma"): the layout-0 bits at every
    tile configuration and K split, M = 1..40 (several token tiles), bias or none; auto with a
    layout keeps auto's choice of this kernel at M = 5..32 and runs mma elsewhere (where layout
    0's auto may take fma or the tiled GEMM)."""
    monkeypatch.setenv("TORCHQUANT_NVFP4_WGMMA_TILE", tile)
    monkeypatch.setenv("TORCHQUANT_DQ_WGMMA_SPLITS", splits)
    x_all, wp, ws, gs, bias = _operands(40, N, K, dtype, seed=N + K)
    w1 = ops.nvfp4_relayout(wp, layout)
    wd = ref.dequantize_nvfp4_ref(wp, ws, gs)
    for M in (1, 4, 5, 16, 17, 32, 40):
        x = x_all[:M].contiguous()
        for b in (None, bias):
            y0 = ops.nvfp4_gemv(x, wp, ws, gs, b, "wgmma")
            _poison()
            y1 = ops.nvfp4_gemv(x, w1, ws, gs, b, "wgmma", layout)
            if layout == 3:  # other partial sums (above): the bound
                _within_bound(y1, x, wd, b, f"layout 3 wgmma {tile} {splits} M={M}")
            else:
                assert torch.equal(y1, y0), (tile, splits, M)
        out = {}
        names = kernels_launched(lambda: out.setdefault("y", ops.nvfp4_gemv(x, w1, ws, gs, bias, "auto", layout)))
        wg = [n for n in names if "fp4_gemv_sm90a_kernel" in n]
        assert bool(wg) == (5 <= M <= 32), (M, names)
        elem = "__nv_bfloat16" if dtype == torch.bfloat16 else "__half"
        assert all(f"{elem}, {layout}>" in n for n in wg), wg  # the kernel's layout argument
        if nvfp4_direct_by_auto(layout, M, N, K):
            want = ops.nvfp4_gemv(x, w1, ws, gs, bias, "direct", layout)
        elif layout == 3:
            want = ops.nvfp4_gemv(x, w1, ws, gs, bias, "wgmma" if wg else "mma", layout)
        else:
            want = ops.nvfp4_gemv(x, wp, ws, gs, bias, "wgmma" if wg else "mma")
        assert torch.equal(out["y"], want), M
