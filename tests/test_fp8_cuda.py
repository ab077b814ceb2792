"""CUDA tests for fp8_block_gemv, quantize_fp8_block and dequantize_fp8_block.

Every forced kernel path ("fma", "mma", "tile", "wgmma" on sm_90 with
torchquant._C_sm90a, and "direct" on sm_89+) is run over fp16/bf16, bias/no bias,
M = 1..16, 17 and 33, odd N, K tails and every block-size class (multiples of 64,
of 32 but not 64, of 16 only; "wgmma" takes block sizes that are multiples of 64
and K % 128 == 0, "direct" block_size % 64 == 0 and K % 64 == 0, and each must
refuse the rest with a clear error). Outputs are gated by the derived bound
torchquant.reference.fp32_accum_bound against the float64 reference over the
dequantized weight (products of e4m3 and fp16/bf16 are exact in fp32, so only
the kernel's fp32 accumulation and the final rounding are allowed), never by a
tuned tolerance. quantize/dequantize must match the CPU op bit for bit.
Outputs start as NaN (conftest.poison_cuda) so an element a kernel forgets to
write cannot pass.
"""

import math
import re

import pytest
import torch
import torch.nn.functional as F

from conftest import (HAS_CUDA, cuda_capability, kernels_launched, misaligned, narrow_dram, poison_cuda,
                      requires_sm90a, sm_count)

pytestmark = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")

if HAS_CUDA:
    import torchquant  # noqa: F401  (registers torch.ops.torchquant)
    from torchquant import reference as ref

OPS = torch.ops.torchquant if HAS_CUDA else None
DTYPES = [torch.float16, torch.bfloat16]
HAS_MMA = cuda_capability() >= (8, 0)
WGMMA = (requires_sm90a("_fp8_block_gemv_sm90a") if HAS_CUDA
         else pytest.mark.skipif(True, reason="needs a CUDA GPU"))
HAS_WGMMA = not WGMMA.args[0]
HAS_DIRECT = cuda_capability() >= (8, 9)
NARROW_DRAM = HAS_CUDA and narrow_dram()  # where auto's direct_rule may take the direct GEMV
PATHS = ["fma", pytest.param("mma", marks=pytest.mark.skipif(not HAS_MMA, reason="mma needs sm_80+")),
         pytest.param("tile", marks=pytest.mark.skipif(not HAS_MMA, reason="tile needs sm_80+")),
         pytest.param("wgmma", marks=WGMMA),
         pytest.param("direct", marks=pytest.mark.skipif(not HAS_DIRECT, reason="direct needs sm_89+"))]
M_SWEEP = list(range(1, 17)) + [17, 33]


# --------------------------------------------------------------- helpers ----
def quantize_weight(w: torch.Tensor, bs: int):
    """Pure-torch block quantization used only to make test weights (the op's
    own quantizer is tested separately against the CPU)."""
    n, k = w.shape
    nb = math.ceil(k / bs)
    blocks = F.pad(w.float(), (0, nb * bs - k)).view(n, nb, bs)
    amax = blocks.abs().amax(-1)
    scale = torch.where(amax > 0, amax / 448.0, torch.ones_like(amax))
    q = (blocks / scale[..., None]).clamp(-448, 448).reshape(n, nb * bs)[:, :k]
    return q.contiguous().to(torch.float8_e4m3fn), scale.contiguous()


def dequant64(w_q: torch.Tensor, scale: torch.Tensor, bs: int) -> torch.Tensor:
    k = w_q.shape[1]
    return w_q.double() * scale.double().repeat_interleave(bs, dim=1)[:, :k]


def make_weight(n: int, k: int, bs: int, gen: torch.Generator, device="cuda"):
    """Random weight whose magnitude changes from block to block (so the block
    scales differ and a scale applied to the wrong block shows), with one
    all-zero block when there is room (its scale is 1)."""
    nb = math.ceil(k / bs)
    mag = torch.exp2(torch.randint(-4, 5, (n, nb), generator=gen).float())
    w = torch.randn(n, k, generator=gen) * mag.repeat_interleave(bs, dim=1)[:, :k]
    if n > 1 and nb > 1:
        w[n // 2, :bs] = 0.0
    w_q, scale = quantize_weight(w, bs)
    return w_q.to(device), scale.to(device)


def poison_output(shape, dtype):
    """conftest.poison_cuda poisons the allocator's large pool; an output under
    1 MB comes from the small pool, so also leave a NaN-filled block of the
    output's exact size there for the op's allocation to reuse."""
    poison_cuda()
    t = torch.empty(shape, dtype=dtype, device="cuda")
    t.view(torch.uint8).fill_(0xFF)
    del t


def run_gemv(x, w_q, w_scale, bs, bias, kernel):
    poison_output((x.shape[0], w_q.shape[0]), x.dtype)
    y = OPS.fp8_block_gemv(x, w_q, w_scale, block_size=bs, bias=bias, path=kernel)
    torch.cuda.synchronize()
    return y


def path_refuses(kernel, x, w_q, w_scale, bs):
    """Path 'wgmma' takes block_size % 64 == 0 and K % 128 == 0, path 'direct' block_size % 64 == 0
    and K % 64 == 0. Outside that each must raise a clear error; returns True after checking it
    does (the caller then has nothing to run)."""
    k_multiple = {"wgmma": 128, "direct": 64}.get(kernel)
    if k_multiple is None or (bs % 64 == 0 and x.shape[1] % k_multiple == 0):
        return False
    with pytest.raises(RuntimeError, match=f"path '{kernel}' needs"):
        OPS.fp8_block_gemv(x, w_q, w_scale, block_size=bs, path=kernel)
    return True


def check_against_reference(y, x, w_q, w_scale, bs, bias, what=""):
    """|y - ref| <= fp32_accum_bound elementwise; returns the max error."""
    assert y.dtype == x.dtype and y.shape == (x.shape[0], w_q.shape[0]), what
    xc, wqc, sc = x.cpu(), w_q.cpu(), w_scale.cpu()
    bc = None if bias is None else bias.cpu()
    r = ref.fp8_block_gemv_ref(xc, wqc, sc, bs, bias=bc).double()
    bound = ref.fp32_accum_bound(xc, dequant64(wqc, sc, bs), bias=bc, out_dtype=x.dtype)
    err = (y.cpu().double() - r).abs()
    ok = err <= bound  # NaN (an unwritten output) fails here
    if not bool(ok.all()):
        bad = (~ok).nonzero()[:5].tolist()
        pytest.fail(
            f"{what}: {int((~ok).sum())} of {err.numel()} outputs outside the fp32 bound; "
            f"first at [m, n] = {bad}, max err {err.max().item():.3e}, "
            f"bound there {bound[tuple(bad[0])].item():.3e}"
        )
    return err.max().item()


# ------------------------------------------------------------ GEMV: M sweep --
@pytest.mark.parametrize("kernel", PATHS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("with_bias", [False, True])
def test_gemv_m_sweep(kernel, dtype, with_bias):
    # Odd N (a partial 16-column tile), K = 4096 + 16 (a partial 64-wide chunk
    # and a ragged last scale block), default block size; path 'wgmma' (K % 128 == 0) at
    # K = 4096 + 128 with block size 256 (a ragged last scale block of 128), path 'direct'
    # (K % 64 == 0) at K = 4096 + 64 with block size 192 (a ragged last block of 128).
    gen = torch.Generator().manual_seed(11)
    n, k, bs = {"wgmma": (257, 4096 + 128, 256), "direct": (257, 4096 + 64, 192)}.get(kernel, (257, 4096 + 16, 128))
    w_q, w_scale = make_weight(n, k, bs, gen)
    bias = (torch.randn(n, generator=gen) * 4).to(dtype).cuda() if with_bias else None
    for m in M_SWEEP:
        x = torch.randn(m, k, generator=gen).to(dtype).cuda()
        y = run_gemv(x, w_q, w_scale, bs, bias, kernel)
        check_against_reference(y, x, w_q, w_scale, bs, bias, f"{kernel} {dtype} M={m}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bs", [64, 128, 192])
@pytest.mark.parametrize("knob,ksplit", [("", ""), ("", "1"), ("", "4"),
                                         ("TORCHQUANT_FP8_REG_KERNEL", "")])
def test_gemv_m_over_8_both_kernels(monkeypatch, dtype, bs, knob, ksplit):
    """M > 8 at block sizes that are multiples of 64: the cp.async-ring kernel
    with 16-row tiles (two n-tiles per weight fragment; the default), with
    automatic and forced K-splits, and the register-prefetch kernel forced by
    TORCHQUANT_FP8_REG_KERNEL; ragged last tiles, several M tiles, rows past
    N, a partial stage and scale block at the end of K."""
    if torch.cuda.get_device_capability() < (8, 0):
        pytest.skip("the mma path needs sm_80+")
    if knob:
        monkeypatch.setenv(knob, "1")
    if ksplit:
        monkeypatch.setenv("TORCHQUANT_FP8_KSPLIT", ksplit)
    gen = torch.Generator().manual_seed(bs)
    n, k = 257, 4096 + 64
    w_q, w_scale = make_weight(n, k, bs, gen)
    bias = (torch.randn(n, generator=gen) * 4).to(dtype).cuda()
    for m in (9, 15, 16, 17, 24, 40):
        x = torch.randn(m, k, generator=gen).to(dtype).cuda()
        y = run_gemv(x, w_q, w_scale, bs, bias, "mma")
        check_against_reference(y, x, w_q, w_scale, bs, bias, f"{knob} ks={ksplit} {dtype} bs={bs} M={m}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xring", ["-1", "1", "2", "3", "4", "5", ""])
@pytest.mark.parametrize("ksplit", ["", "2"])
def test_gemv_ring_x_through_ring(monkeypatch, dtype, xring, ksplit):
    """The ring kernel with x copied into the ring (TORCHQUANT_FP8_XRING = S:
    4 or 3 stages for M <= 8, 3 or 2 for M = 9..16; a depth not built for that
    M falls back to the rule of "1": XR where K is split over 4+ warps with at
    most 8 stages each, which this shape is unless the K split is forced to 2;
    "5" and unset, the default: the narrow rule, K split over 16 warps and
    M <= 2, so M = 1, 2 of this shape take XR and larger M do not) and with x
    loaded into registers (-1): every M of one and two n-tiles, several M tiles,
    K ending inside a stage (zero-filled x units), rows past N, a forced K split."""
    if torch.cuda.get_device_capability() < (8, 0):
        pytest.skip("the mma path needs sm_80+")
    if xring:
        monkeypatch.setenv("TORCHQUANT_FP8_XRING", xring)
    else:
        monkeypatch.delenv("TORCHQUANT_FP8_XRING", raising=False)
    if ksplit:
        monkeypatch.setenv("TORCHQUANT_FP8_KSPLIT", ksplit)
    gen = torch.Generator().manual_seed(int(xring or 0) + 7)
    # 9 column tiles and 66 chunks of 64: the ring kernel's K split is 16 (the narrow rule's).
    n, k, bs = 131, 4096 + 64 + 16, 128
    w_q, w_scale = make_weight(n, k, bs, gen)
    bias = (torch.randn(n, generator=gen) * 4).to(dtype).cuda()
    for m in M_SWEEP:
        x = torch.randn(m, k, generator=gen).to(dtype).cuda()
        y = run_gemv(x, w_q, w_scale, bs, bias, "mma")
        check_against_reference(y, x, w_q, w_scale, bs, bias, f"xring={xring} ks={ksplit} {dtype} M={m}")


# ------------------------------------------- tile GEMM: M tiles and K splits --
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bs", [48, 64, 128, 256])
@pytest.mark.parametrize("splits", ["", "1", "3"])
def test_tile_m_tiles_and_k_splits(monkeypatch, dtype, bs, splits):
    """The tiled GEMM (path "tile", auto for M > 48): several 64-row M tiles with a
    ragged last one, rows past N in the last 64-column tile, a K tail inside the
    last 128-wide k tile and a ragged last scale block, with the automatic K split
    (N = 257 gives 5 column tiles, so it splits) and forced ones
    (TORCHQUANT_TILE_SPLITS), against the float64 bound; auto matches forced."""
    if not HAS_MMA:
        pytest.skip("the tile path needs sm_80+")
    if splits:
        monkeypatch.setenv("TORCHQUANT_TILE_SPLITS", splits)
    gen = torch.Generator().manual_seed(bs + 7)
    n, k = 257, 2048 + 48
    w_q, w_scale = make_weight(n, k, bs, gen)
    bias = (torch.randn(n, generator=gen) * 4).to(dtype).cuda()
    for m in (17, 63, 64, 65, 130, 300):
        x = torch.randn(m, k, generator=gen).to(dtype).cuda()
        for b in (None, bias):
            y = run_gemv(x, w_q, w_scale, bs, b, "tile")
            check_against_reference(y, x, w_q, w_scale, bs, b, f"tile splits={splits} {dtype} bs={bs} M={m}")
            if m > 48:  # auto takes the tile path from M = 49
                assert torch.equal(run_gemv(x, w_q, w_scale, bs, b, "auto"), y)


# ---------------------------------------- GEMV: shapes x block sizes x tails --
SHAPES = [(1, 16), (15, 48), (17, 144), (16, 64), (33, 4096), (257, 4096 + 16), (40, 208), (19, 640)]
BLOCK_SIZES = [16, 32, 48, 64, 80, 96, 128, 256]


@pytest.mark.parametrize("kernel", PATHS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bs", BLOCK_SIZES)
@pytest.mark.parametrize("n,k", SHAPES)
def test_gemv_shapes(kernel, dtype, bs, n, k):
    gen = torch.Generator().manual_seed(n * 7919 + k * 31 + bs)
    w_q, w_scale = make_weight(n, k, bs, gen)
    if path_refuses(kernel, torch.zeros(1, k, dtype=dtype, device="cuda"), w_q, w_scale, bs):
        return
    for m in (1, 3, 8, 9, 16, 17):
        for with_bias in (False, True):
            bias = (torch.randn(n, generator=gen) * 4).to(dtype).cuda() if with_bias else None
            x = torch.randn(m, k, generator=gen).to(dtype).cuda()
            y = run_gemv(x, w_q, w_scale, bs, bias, kernel)
            check_against_reference(
                y, x, w_q, w_scale, bs, bias,
                f"{kernel} {dtype} N={n} K={k} bs={bs} M={m} bias={with_bias}",
            )


# ---------------------------------------------- GEMV: lane ownership probe --
@pytest.mark.parametrize("kernel", PATHS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_gemv_one_hot_probe(kernel, dtype):
    """One nonzero weight at a time: y[:, n] must be x[:, k] * w * scale and
    every other output 0, so any swap in the (column, k, row) mapping of the
    fragments fails on the exact position instead of averaging out."""
    n_cols, k, bs, m = 32, 256, 64, 9
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(m, k, generator=gen).to(dtype).cuda()
    scale = torch.exp2(torch.randint(-3, 4, (n_cols, k // bs), generator=gen).float()).cuda()
    for n, kk in [(0, 0), (1, 1), (2, 2), (3, 3), (7, 17), (8, 4), (9, 63), (15, 64),
                  (16, 100), (23, 127), (24, 128), (31, 191), (12, 150), (5, 75), (30, 200),
                  (17, 255)]:
        w = torch.zeros(n_cols, k)
        w[n, kk] = 1.5
        w = w.to(torch.float8_e4m3fn).cuda()
        y = run_gemv(x, w, scale, bs, None, kernel).double()
        want = torch.zeros(m, n_cols, dtype=torch.float64, device="cuda")
        want[:, n] = x[:, kk].double() * 1.5 * scale[n, kk // bs].double()
        want = want.to(dtype).double()  # the one rounding the kernel does
        assert torch.equal(y, want), f"{kernel} {dtype} probe (n={n}, k={kk})"


# ------------------------------------------------------- GEMV: large shape --
@pytest.mark.parametrize("dtype", DTYPES)
def test_gemv_large_and_mma_vs_fma(dtype):
    gen = torch.Generator().manual_seed(3)
    n, k, bs = 4096, 4096, 128
    w_q, w_scale = make_weight(n, k, bs, gen)
    for m in (1, 4, 16):
        x = torch.randn(m, k, generator=gen).to(dtype).cuda()
        errs = {}
        for kernel in (["fma"] + (["mma", "tile"] if HAS_MMA else []) + (["wgmma"] if HAS_WGMMA else [])
                       + (["direct"] if HAS_DIRECT else [])):
            y = run_gemv(x, w_q, w_scale, bs, None, kernel)
            errs[kernel] = check_against_reference(y, x, w_q, w_scale, bs, None, f"{kernel} M={m}")
        y_auto = run_gemv(x, w_q, w_scale, bs, None, "auto")
        check_against_reference(y_auto, x, w_q, w_scale, bs, None, f"auto M={m}")
        if "mma" in errs:
            # Both accumulate in fp32 from exact products; the tensor-core order
            # must not be meaningfully worse than the scalar one.
            assert errs["mma"] <= 2 * errs["fma"], (dtype, m, errs)
            assert errs["tile"] <= 2 * errs["fma"], (dtype, m, errs)
        for kernel in ("wgmma", "direct"):
            if kernel in errs:
                assert errs[kernel] <= 2 * errs["fma"], (dtype, m, errs)


# ------------------------------------------------- GEMV: misc properties --
@pytest.mark.parametrize("kernel", PATHS)
def test_gemv_misaligned_views(kernel):
    """Views whose data pointer is not 16-byte aligned still give the right
    answer (the op copies them)."""
    gen = torch.Generator().manual_seed(9)
    m, n, k, bs = 3, 40, 256, 64
    w_q, w_scale = make_weight(n, k, bs, gen)
    xbuf = torch.randn(m * k + 1, generator=gen).half().cuda()
    x = xbuf[1:].view(m, k)
    wbuf = torch.zeros(n * k + 3, dtype=torch.uint8, device="cuda")
    wbuf[3:] = w_q.view(torch.uint8).flatten()
    w_view = wbuf[3:].view(n, k).view(torch.float8_e4m3fn)
    assert x.data_ptr() % 16 != 0 and w_view.data_ptr() % 16 != 0
    y = run_gemv(x, w_view, w_scale, bs, None, kernel)
    check_against_reference(y, x.contiguous(), w_q, w_scale, bs, None, f"{kernel} misaligned")


@pytest.mark.parametrize("kernel", PATHS)
def test_gemv_cuda_graph_capture(kernel):
    gen = torch.Generator().manual_seed(4)
    m, n, k, bs = 4, 1000, 2048, 128
    w_q, w_scale = make_weight(n, k, bs, gen)
    x = torch.randn(m, k, generator=gen).half().cuda()
    eager = OPS.fp8_block_gemv(x, w_q, w_scale, block_size=bs, path=kernel)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up outside the capture
        OPS.fp8_block_gemv(x, w_q, w_scale, block_size=bs, path=kernel)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = OPS.fp8_block_gemv(x, w_q, w_scale, block_size=bs, path=kernel)
    x.copy_(torch.randn(m, k, generator=gen).half().cuda())
    g.replay()
    torch.cuda.synchronize()
    check_against_reference(y, x, w_q, w_scale, bs, None, f"{kernel} graph replay")
    assert not torch.equal(y, eager)  # the replay saw the new x


def test_gemv_deterministic():
    gen = torch.Generator().manual_seed(6)
    m, n, k, bs = 8, 512, 8192, 128
    w_q, w_scale = make_weight(n, k, bs, gen)
    x = torch.randn(m, k, generator=gen).bfloat16().cuda()
    for kernel in (["fma"] + (["mma", "tile"] if HAS_MMA else []) + (["wgmma"] if HAS_WGMMA else [])
                   + (["direct"] if HAS_DIRECT else [])):
        a = run_gemv(x, w_q, w_scale, bs, None, kernel)
        b = run_gemv(x, w_q, w_scale, bs, None, kernel)
        assert torch.equal(a, b), kernel


# ------------------------------------------------------ GEMV: direct path --
@pytest.mark.skipif(not HAS_DIRECT, reason="direct needs sm_89+")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bs", [64, 128, 192, 256])
def test_gemv_direct_builds_same_bits(monkeypatch, dtype, bs):
    """fp8_gemv_direct_kernel's builds (TORCHQUANT_FP8_DIRECT_BUILD 1: U = 2 / 3 blocks per SM,
    2: U = 3 / 2, 3: U = 4 / 2, the default at M <= 8, one token tile of 8 rows per block; 4: two
    token tiles, U = 2 / 2, the default at M > 8; 5: two tiles, U = 1 / 3) sum the same products
    in the same order per output (an mma's D column depends on its own B column only), so they
    agree bit for bit; each is within the bound. Rounds that end past the row (pieces % (8 U) !=
    0), rows past N, one to three token tiles of either height (M = 9, 17, 24), and the
    static_weight launch (loads before the PDL wait)."""
    gen = torch.Generator().manual_seed(bs + 1)
    n, k = 131, 64 * 37  # 37 pieces: every build ends in a partial round
    w_q, w_scale = make_weight(n, k, bs, gen)
    bias = (torch.randn(n, generator=gen) * 4).to(dtype).cuda()
    for m in (1, 2, 5, 8, 9, 16, 17, 24):
        x = torch.randn(m, k, generator=gen).to(dtype).cuda()
        outs = []
        for build in ("1", "2", "3", "4", "5"):
            monkeypatch.setenv("TORCHQUANT_FP8_DIRECT_BUILD", build)
            y = run_gemv(x, w_q, w_scale, bs, bias, "direct")
            check_against_reference(y, x, w_q, w_scale, bs, bias, f"direct build {build} {dtype} bs={bs} M={m}")
            outs.append(y)
            poison_output((m, n), dtype)
            ys = OPS.fp8_block_gemv(x, w_q, w_scale, block_size=bs, bias=bias, path="direct", static_weight=True)
            torch.cuda.synchronize()
            assert torch.equal(ys, y), f"static_weight build {build} M={m}"
        assert all(torch.equal(o, outs[0]) for o in outs[1:]), f"builds differ: {dtype} bs={bs} M={m}"


def auto_runs_direct(x, w_q, w_scale, bs):
    """Whether path 'auto' launches the direct GEMV for this call (by kernel name), and the names."""
    names = kernels_launched(lambda: OPS.fp8_block_gemv(x, w_q, w_scale, block_size=bs))
    return any("fp8_gemv_direct_kernel" in k for k in names), names


def check_auto_is_direct(x, w_q, w_scale, bs, label):
    """auto's output equals path 'direct''s bit for bit and lies within the derived bound."""
    y = run_gemv(x, w_q, w_scale, bs, None, "auto")
    assert torch.equal(y, run_gemv(x, w_q, w_scale, bs, None, "direct")), label
    check_against_reference(y, x, w_q, w_scale, bs, None, label)


@pytest.mark.skipif(not HAS_DIRECT, reason="direct needs sm_89+")
@pytest.mark.parametrize("dtype", DTYPES)
def test_gemv_direct_rule(monkeypatch, dtype):
    """fp8_block_gemv.cu direct_rule: on cards of at most 15.0 DRAM bytes per SM clock (the
    H100; not the H200, where it lost) auto runs the direct GEMV at M <= 8 on grids of at least
    8 x SMs blocks of 16 rows (bit-identical to path 'direct'), not one block fewer, not at
    M = 9 (the M = 9..16 branch takes only grids of <= 2 x SMs blocks); never on other cards,
    and never under TORCHQUANT_FP8_DIRECT=-1."""
    monkeypatch.delenv("TORCHQUANT_FP8_DIRECT", raising=False)
    gen = torch.Generator().manual_seed(31)
    k, bs = 256, 128
    n_rule = 16 * 8 * sm_count()
    for n, want in ((n_rule - 11, NARROW_DRAM), (n_rule - 16 - 11, False)):  # ceil(n / 16) = 8 SMs / one fewer
        w_q, w_scale = make_weight(n, k, bs, gen)
        for m in (1, 8, 9):
            x = torch.randn(m, k, generator=gen).to(dtype).cuda()
            took, names = auto_runs_direct(x, w_q, w_scale, bs)
            assert took == (want and m <= 8), (n, m, names)
            if took:
                check_auto_is_direct(x, w_q, w_scale, bs, f"auto direct {dtype} N={n} M={m}")
        monkeypatch.setenv("TORCHQUANT_FP8_DIRECT", "-1")
        x = torch.randn(1, k, generator=gen).to(dtype).cuda()
        took, names = auto_runs_direct(x, w_q, w_scale, bs)
        assert not took, names
        monkeypatch.delenv("TORCHQUANT_FP8_DIRECT")


@pytest.mark.skipif(not HAS_DIRECT, reason="direct needs sm_89+")
@pytest.mark.parametrize("dtype", DTYPES)
def test_gemv_direct_rule_small_grid(monkeypatch, dtype):
    """direct_rule at M = 9..16, on cards of at most 15.0 DRAM bytes per SM clock: auto runs the
    direct GEMV (two token tiles) on grids of more than SMs and at most 2 x SMs blocks of 16 rows
    (bit-identical to path 'direct'), not at M = 8 there, not one block beyond either edge; on
    other cards nowhere."""
    monkeypatch.delenv("TORCHQUANT_FP8_DIRECT", raising=False)
    gen = torch.Generator().manual_seed(37)
    k, bs, sms = 192, 64, sm_count()
    for n, want in ((16 * 2 * sms - 11, True), (16 * sms + 5, True), (16 * 2 * sms + 5, False),
                    (16 * sms - 3, False)):
        w_q, w_scale = make_weight(n, k, bs, gen)
        for m in (8, 9, 13, 16):
            x = torch.randn(m, k, generator=gen).to(dtype).cuda()
            took, names = auto_runs_direct(x, w_q, w_scale, bs)
            assert took == (want and m >= 9 and NARROW_DRAM), (n, m, names)
            if took:
                check_auto_is_direct(x, w_q, w_scale, bs, f"auto direct {dtype} N={n} M={m}")


@pytest.mark.skipif(not HAS_MMA, reason="mma needs sm_80+")
@pytest.mark.parametrize("dtype", DTYPES)
def test_gemv_tiled_auto_rule(monkeypatch, dtype):
    """direct_rule on the tiled weight: auto runs the direct GEMV's tiled form at M <= 8 on grids of
    more than SMs blocks of 16 rows (narrow-DRAM sm_89+ cards; not at exactly SMs blocks), at
    M = 9..16 inside the row-major rule's window (not past 2 x SMs), else the ring kernel's tiled
    form; each with that kernel's bits. TORCHQUANT_FP8_DIRECT=-1 / 1 force the ring / the direct."""
    gen = torch.Generator().manual_seed(47)
    k, bs, sms = 256, 128, sm_count()
    for n in (16 * sms, 16 * sms + 16, 16 * 2 * sms + 16):
        w_q, w_scale = make_weight(n, k, bs, gen)
        tq, ts = tiled(w_q, w_scale)
        for m in (1, 8, 9, 16):
            x = torch.randn(m, k, generator=gen).to(dtype).cuda()
            check_tiled_auto(monkeypatch, x, w_q, w_scale, tq, ts, bs, None, f"tiled rule {dtype} N={n} M={m}")
    x = torch.randn(1, k, generator=gen).to(dtype).cuda()
    for knob, kernel in (("-1", "ring"), ("1", "direct" if HAS_DIRECT else "ring")):
        monkeypatch.setenv("TORCHQUANT_FP8_DIRECT", knob)
        names = kernels_launched(lambda: OPS.fp8_block_gemv(x, tq, ts, block_size=bs, tiled=True))
        assert tiled_kernel(names) == kernel, (knob, names)
    monkeypatch.delenv("TORCHQUANT_FP8_DIRECT")
    # the three layers straddle the rule's edges: SMs blocks (ring), SMs + 1 (direct at M <= 8 and
    # M = 9..16), 2 x SMs + 1 (direct at M <= 8 only)
    assert tiled_auto_direct(1, 16 * sms + 16, k, bs) == (HAS_DIRECT and NARROW_DRAM)
    assert not tiled_auto_direct(1, 16 * sms, k, bs) and not tiled_auto_direct(9, 16 * 2 * sms + 16, k, bs)


@pytest.mark.skipif(not HAS_DIRECT, reason="direct needs sm_89+")
def test_gemv_direct_knob_and_refusals(monkeypatch):
    """TORCHQUANT_FP8_DIRECT=1 makes auto run the direct GEMV wherever it can at M <= 16 (the A/B
    knob), and not at M = 17 or where the path's preconditions fail; a forced 'direct' outside them
    raises naming them."""
    gen = torch.Generator().manual_seed(12)
    n, k, bs = 96, 1024, 128
    w_q, w_scale = make_weight(n, k, bs, gen)
    x = torch.randn(4, k, generator=gen).bfloat16().cuda()
    monkeypatch.setenv("TORCHQUANT_FP8_DIRECT", "1")
    took, names = auto_runs_direct(x, w_q, w_scale, bs)
    assert took, names
    x16 = torch.randn(16, k, generator=gen).bfloat16().cuda()
    took, names = auto_runs_direct(x16, w_q, w_scale, bs)
    assert took, names
    x17 = torch.randn(17, k, generator=gen).bfloat16().cuda()
    took, names = auto_runs_direct(x17, w_q, w_scale, bs)
    assert not took, names
    w96, s96 = make_weight(n, k, 96, gen)
    took, names = auto_runs_direct(x, w96, s96, 96)
    assert not took, names
    with pytest.raises(RuntimeError, match=r"path 'direct' needs block_size % 64 == 0 and K % 64 == 0"):
        OPS.fp8_block_gemv(x, w96, s96, block_size=96, path="direct")
    x1040 = torch.randn(1, 1040, generator=gen).bfloat16().cuda()
    w1040, s1040 = make_weight(n, 1040, 64, gen)
    with pytest.raises(RuntimeError, match=r"path 'direct' needs"):
        OPS.fp8_block_gemv(x1040, w1040, s1040, block_size=64, path="direct")


# ------------------------------------------- GEMV: the tiled weight (fp8_tiles.h) --
def tiled(w_q, w_scale):
    return OPS.fp8_block_tile(w_q, w_scale)


def test_tile_cuda_matches_cpu():
    """fp8_block_tile on CUDA: the CPU op's bytes both ways (a ragged last scale block, nb = 3)."""
    gen = torch.Generator().manual_seed(41)
    w_q, w_scale = make_weight(48, 64 * 5, 128, gen)
    tq, ts = tiled(w_q, w_scale)
    cq, cs = OPS.fp8_block_tile(w_q.cpu(), w_scale.cpu())
    assert torch.equal(tq.cpu().view(torch.uint8), cq.view(torch.uint8)) and torch.equal(ts.cpu(), cs)
    bq, bs_ = OPS.fp8_block_tile(tq, ts, inverse=True)
    assert torch.equal(bq.view(torch.uint8), w_q.view(torch.uint8)) and torch.equal(bs_, w_scale)


def tiled_kernel(names):
    """'direct' / 'ring' / 'wgmma' for the tiled kernel forms (kTiled = true) among the launched
    names."""
    if any(re.search(r"fp8_gemv_direct_kernel<\w+, \d+, \d+, \d+, true>", n) for n in names):
        return "direct"
    if any(re.search(r"fp8_gemv_mma_cp_kernel<\w+, \d+, \d+, false, true>", n) for n in names):
        return "ring"
    if any(re.search(r"dq_gemv_sm90a_kernel<[^()]*, (?:true|false), true>", n) for n in names):
        return "wgmma"
    return None


def rows_auto_wgmma(m, n, k, bs):
    """fp8_block_gemv.cu choose_fp8_gemv_kernel's wgmma branch (the row-major weight, knobs
    unset): sm_90 with the module, M <= 16, block_size % 64 == 0, K % 128 == 0, and M = 9..16 on
    layers of at least SMs / 2 feature tiles of 128 (SMs / 4 with N * K >= 64M) or M = 5..8 on
    N * K >= 256M."""
    if not (HAS_WGMMA and m <= 16 and bs % 64 == 0 and k % 128 == 0):
        return False
    tiles, sms = (n + 127) // 128, sm_count()
    wide = tiles * 2 >= sms or (tiles * 4 >= sms and n * k >= 1 << 26)
    return (m >= 9 and wide) or (m >= 5 and n * k >= 1 << 28)


def tiled_auto_direct(m, n, k, bs):
    """fp8_block_gemv.cu direct_rule(..., tiled=True), knob unset: on sm_89+ cards of at most 15.0
    DRAM bytes per SM clock, at M <= 8 every grid of more than SMs blocks of 16 rows, at M = 9..16
    more than SMs and at most 2 x SMs; never elsewhere."""
    if not (HAS_DIRECT and NARROW_DRAM and bs % 64 == 0 and k % 64 == 0 and m <= 16):
        return False
    blocks, sms = (n + 15) // 16, sm_count()
    return blocks > sms if m <= 8 else sms < blocks <= 2 * sms


def assert_tiled_bits(x, tq, ts, bs, bias, path, want, label):
    """`path` on the tiled weight, with and without static_weight, output poisoned first: `want`'s
    bits (the row-major weight's on the same kernel)."""
    for static in (False, True):
        poison_output(want.shape, x.dtype)
        got = OPS.fp8_block_gemv(x, tq, ts, block_size=bs, bias=bias, path=path, static_weight=static, tiled=True)
        torch.cuda.synchronize()
        assert torch.equal(got, want), f"{label} static={static}"


def tiled_auto_kernel(m, n, k, bs):
    """Auto on the tiled weight (fp8_block_gemv.cu): the direct GEMV where direct_rule takes it
    (tiled_auto_direct), else on wide-DRAM cards the wgmma GEMV where the row-major weight would
    take it, else the ring kernel."""
    if tiled_auto_direct(m, n, k, bs):
        return "direct"
    return "wgmma" if rows_auto_wgmma(m, n, k, bs) and not NARROW_DRAM else "ring"


def check_tiled_auto(monkeypatch, x, w_q, w_scale, tq, ts, bs, bias, label):
    """Auto on the tiled weight runs the kernel tiled_auto_kernel names and gives that kernel's
    row-major bits (the ring without XR)."""
    monkeypatch.delenv("TORCHQUANT_FP8_DIRECT", raising=False)
    names = kernels_launched(lambda: OPS.fp8_block_gemv(x, tq, ts, block_size=bs, bias=bias, tiled=True))
    kernel = tiled_auto_kernel(x.shape[0], w_q.shape[0], w_q.shape[1], bs)
    assert tiled_kernel(names) == kernel, (label, names)
    poison_output((x.shape[0], w_q.shape[0]), x.dtype)
    got = OPS.fp8_block_gemv(x, tq, ts, block_size=bs, bias=bias, tiled=True)
    torch.cuda.synchronize()
    monkeypatch.setenv("TORCHQUANT_FP8_XRING", "0")
    want = run_gemv(x, w_q, w_scale, bs, bias, {"ring": "mma"}.get(kernel, kernel))
    monkeypatch.delenv("TORCHQUANT_FP8_XRING")
    assert torch.equal(got, want), label
    check_against_reference(got, x, w_q, w_scale, bs, bias, label)


@pytest.mark.skipif(not HAS_DIRECT, reason="direct needs sm_89+")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bs", [64, 128, 192, 256])
def test_gemv_direct_tiled_same_bits(monkeypatch, dtype, bs):
    """Every direct build's tiled form (kTiled: other load addresses only) gives the row-major
    weight's bits in the same build, within the bound: rounds ending past the row (37 pieces),
    ragged last scale blocks, M = 1..17 and 40 (one to three token tiles of either height), bias,
    static_weight; and path auto on the tiled weight."""
    gen = torch.Generator().manual_seed(bs + 7)
    n, k = 144, 64 * 37
    w_q, w_scale = make_weight(n, k, bs, gen)
    tq, ts = tiled(w_q, w_scale)
    bias = (torch.randn(n, generator=gen) * 4).to(dtype).cuda()
    for m in list(range(1, 18)) + [40]:
        x = torch.randn(m, k, generator=gen).to(dtype).cuda()
        for build in ("1", "2", "3", "4", "5"):
            monkeypatch.setenv("TORCHQUANT_FP8_DIRECT_BUILD", build)
            want = run_gemv(x, w_q, w_scale, bs, bias, "direct")
            poison_output((m, n), dtype)
            got = OPS.fp8_block_gemv(x, tq, ts, block_size=bs, bias=bias, path="direct", tiled=True)
            torch.cuda.synchronize()
            assert torch.equal(got, want), f"tiled build {build} {dtype} bs={bs} M={m}"
            poison_output((m, n), dtype)
            got = OPS.fp8_block_gemv(x, tq, ts, block_size=bs, bias=bias, path="direct", static_weight=True,
                                     tiled=True)
            torch.cuda.synchronize()
            assert torch.equal(got, want), f"tiled static_weight build {build} M={m}"
        monkeypatch.delenv("TORCHQUANT_FP8_DIRECT_BUILD")
        check_against_reference(want, x, w_q, w_scale, bs, bias, f"direct {dtype} bs={bs} M={m}")
        check_tiled_auto(monkeypatch, x, w_q, w_scale, tq, ts, bs, bias, f"tiled auto {dtype} bs={bs} M={m}")


@pytest.mark.skipif(not HAS_MMA, reason="mma needs sm_80+")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bs", [64, 128, 192, 256])
def test_gemv_ring_tiled_same_bits(monkeypatch, dtype, bs):
    """The ring kernel's tiled form (path 'mma' on a tiled weight: the producer reads each unit and
    the scales from their tiled places) fills the same stages, so it gives the row-major ring
    kernel's bits (x in registers, TORCHQUANT_FP8_XRING=0): K = 64 * 37 (the last stage half
    past the row), one to many K-split warps (N = 32 .. 272), M = 1..17 and 33 (8- and 16-row
    tiles), bias, static_weight (its early weight copies)."""
    gen = torch.Generator().manual_seed(bs + 9)
    for n, k in ((272, 64 * 37), (32, 64 * 37), (64, 4096)):
        w_q, w_scale = make_weight(n, k, bs, gen)
        tq, ts = tiled(w_q, w_scale)
        bias = (torch.randn(n, generator=gen) * 4).to(dtype).cuda()
        for m in list(range(1, 18)) + [33]:
            x = torch.randn(m, k, generator=gen).to(dtype).cuda()
            b = bias if m % 2 else None
            monkeypatch.setenv("TORCHQUANT_FP8_XRING", "0")
            want = run_gemv(x, w_q, w_scale, bs, b, "mma")
            monkeypatch.delenv("TORCHQUANT_FP8_XRING")
            assert_tiled_bits(x, tq, ts, bs, b, "mma", want, f"tiled ring {dtype} bs={bs} N={n} K={k} M={m}")
            if m in (1, 8, 16, 33):
                check_against_reference(want, x, w_q, w_scale, bs, b, f"ring {dtype} bs={bs} N={n} M={m}")
        x = torch.randn(4, k, generator=gen).to(dtype).cuda()
        check_tiled_auto(monkeypatch, x, w_q, w_scale, tq, ts, bs, None, f"tiled auto {dtype} bs={bs} N={n}")


@pytest.mark.skipif(not HAS_MMA, reason="mma needs sm_80+")
def test_gemv_tiled_kernels_views_graph():
    """The tiled forms run by name (kTiled = true), the row-major weight's do not; misaligned
    views (copied by the op) and CUDA graph replay give the same bits."""
    gen = torch.Generator().manual_seed(43)
    n, k, bs = 256, 1024, 128
    w_q, w_scale = make_weight(n, k, bs, gen)
    tq, ts = tiled(w_q, w_scale)
    x = torch.randn(3, k, generator=gen).bfloat16().cuda()
    paths = ["mma"] + (["direct"] if HAS_DIRECT else []) + (["wgmma"] if HAS_WGMMA else [])
    for path in paths:
        names = kernels_launched(lambda: OPS.fp8_block_gemv(x, tq, ts, block_size=bs, path=path, tiled=True))
        assert tiled_kernel(names) == {"mma": "ring"}.get(path, path), names
        names = kernels_launched(lambda: OPS.fp8_block_gemv(x, w_q, w_scale, block_size=bs, path=path))
        assert tiled_kernel(names) is None, names
        want = run_gemv(x, w_q, w_scale, bs, None, path)
        xm, tqm = misaligned(x, 2), misaligned(tq, 1)
        assert torch.equal(OPS.fp8_block_gemv(xm, tqm, ts, block_size=bs, path=path, tiled=True), want), path
        g = torch.cuda.CUDAGraph()
        xs = x.clone()
        with torch.cuda.graph(g):
            yg = OPS.fp8_block_gemv(xs, tq, ts, block_size=bs, path=path, tiled=True)
        xs.copy_(torch.randn(3, k, generator=gen).bfloat16().cuda())
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(yg, run_gemv(xs, w_q, w_scale, bs, None, path)), path


def test_gemv_tiled_refusals():
    """A tiled weight runs on paths direct, mma and wgmma only: other paths, block sizes that are
    not multiples of 64 and untileable shapes raise, naming the inverse or the condition."""
    gen = torch.Generator().manual_seed(44)
    w_q, w_scale = make_weight(64, 512, 128, gen)
    tq, ts = tiled(w_q, w_scale)
    x = torch.randn(2, 512, generator=gen).bfloat16().cuda()
    for path in ("fma", "tile"):
        with pytest.raises(RuntimeError, match=f"runs on paths 'direct', 'mma' and 'wgmma' only, got path "
                                               f"'{path}'; "
                                               r"fp8_block_tile\(w_q, w_scale, inverse=True\)"):
            OPS.fp8_block_gemv(x, tq, ts, block_size=128, path=path, tiled=True)
    w32, s32 = make_weight(64, 512, 32, gen)
    with pytest.raises(RuntimeError, match="a tiled weight needs block_size % 64 == 0"):
        OPS.fp8_block_gemv(x, *tiled(w32, s32), block_size=32, tiled=True)
    w24, s24 = make_weight(24, 512, 128, gen)
    with pytest.raises(RuntimeError, match="needs N % 16 == 0 and K % 64 == 0 .* got N = 24, K = 512"):
        OPS.fp8_block_gemv(x, w24, s24, block_size=128, tiled=True)
    with pytest.raises(RuntimeError, match="fp8_block_tile: the tiled fp8 weight needs N % 16 == 0"):
        OPS.fp8_block_tile(w24, s24)
    if not HAS_DIRECT:
        with pytest.raises(RuntimeError, match="path 'direct' needs the hardware e4m3 conversion"):
            OPS.fp8_block_gemv(x, tq, ts, block_size=128, path="direct", tiled=True)


# ------------------------------------------------------ GEMV: bad inputs --
def test_gemv_bad_inputs():
    gen = torch.Generator().manual_seed(2)
    n, k, bs = 32, 128, 64
    w_q, w_scale = make_weight(n, k, bs, gen)
    x = torch.randn(2, k, generator=gen).half().cuda()
    with pytest.raises(RuntimeError, match="w_q is on"):
        OPS.fp8_block_gemv(x, w_q.cpu(), w_scale, block_size=bs)
    with pytest.raises(RuntimeError, match="w_scale is on"):
        OPS.fp8_block_gemv(x, w_q, w_scale.cpu(), block_size=bs)
    with pytest.raises(RuntimeError, match="bias is on"):
        OPS.fp8_block_gemv(x, w_q, w_scale, block_size=bs, bias=torch.zeros(n, dtype=torch.half))
    with pytest.raises(RuntimeError, match="path 'wmma' is not a CUDA path"):
        OPS.fp8_block_gemv(x, w_q, w_scale, block_size=bs, path="wmma")
    with pytest.raises(RuntimeError, match="bias dtype"):
        OPS.fp8_block_gemv(x, w_q, w_scale, block_size=bs,
                           bias=torch.zeros(n, dtype=torch.bfloat16, device="cuda"))
    with pytest.raises(RuntimeError, match="block_size"):
        OPS.fp8_block_gemv(x, w_q, w_scale, block_size=40)
    with pytest.raises(RuntimeError, match="multiple of 16"):
        OPS.fp8_block_gemv(x[:, :120].contiguous(), w_q[:, :120].contiguous(),
                           w_scale, block_size=bs)
    with pytest.raises(RuntimeError, match="w_scale must be"):
        OPS.fp8_block_gemv(x, w_q, w_scale[:, :1].contiguous(), block_size=bs)


@pytest.mark.parametrize("path,runs,match", [
    ("wgmma", HAS_WGMMA, "path 'wgmma'"),
    ("direct", HAS_DIRECT, "path 'direct' needs the hardware e4m3 conversion"),
])
def test_gemv_forced_path_unavailable_raises(path, runs, match):
    """Where a path cannot run, forcing it is a clear error: 'wgmma' without sm_90 (or without
    torchquant._C_sm90a), 'direct' below sm_89 (no hardware e4m3 conversion)."""
    if runs:
        pytest.skip(f"the device runs path '{path}'")
    gen = torch.Generator().manual_seed(2)
    w_q, w_scale = make_weight(16, 128, 64, gen)
    x = torch.randn(1, 128, generator=gen).half().cuda()
    with pytest.raises(RuntimeError, match=match):
        OPS.fp8_block_gemv(x, w_q, w_scale, block_size=64, path=path)


@WGMMA
@pytest.mark.parametrize("dtype,bf16cvt", [(torch.float16, ""), (torch.bfloat16, ""),
                                           (torch.bfloat16, "reseat")])
@pytest.mark.parametrize("tile", ["16x1", "16x2", "16x2s3"])
@pytest.mark.parametrize("splits", ["", "1", "3"])
def test_gemv_wgmma_tiles_and_splits(monkeypatch, dtype, bf16cvt, tile, splits):
    """Path 'wgmma' with each tile forced (one or two CTAs per SM, the two-CTA tile with a 5- or
    3-stage ring; bf16's re-seat conversion,
    TORCHQUANT_FP8_WGMMA_BF16=reseat, always runs two) and split-K automatic,
    off and 3 (splits that cut scale blocks of 192 / 256 in the middle): odd N (a partial
    128-feature tile and a partial 16-feature warp slice), a ragged last scale block (K =
    4224 at block size 256), block sizes 64..256, M across token tiles; N = 4104 at M = 33 with 3 splits is
    297 work units, more than the 132 or 264 resident CTAs of an H100/H200, so CTAs also run
    several units in a row."""
    monkeypatch.setenv("TORCHQUANT_FP8_WGMMA_TILE", tile)
    monkeypatch.setenv("TORCHQUANT_DQ_WGMMA_SPLITS", splits)
    monkeypatch.setenv("TORCHQUANT_FP8_WGMMA_BF16", bf16cvt)
    gen = torch.Generator().manual_seed(17)
    for n, k, bs in [(1000, 4096 + 128, 256), (129, 1536 + 128, 64), (300, 2304, 192),
                     (77, 1024 + 128, 128), (4096 + 8, 1024, 128)]:
        w_q, w_scale = make_weight(n, k, bs, gen)
        bias = (torch.randn(n, generator=gen) * 4).to(dtype).cuda()
        for m in (1, 5, 16, 17, 33):
            x = torch.randn(m, k, generator=gen).to(dtype).cuda()
            for b in (None, bias):
                y = run_gemv(x, w_q, w_scale, bs, b, "wgmma")
                check_against_reference(y, x, w_q, w_scale, bs, b,
                                        f"wgmma {tile} splits={splits} N={n} K={k} bs={bs} M={m}")


@WGMMA
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("tile", ["16x1", "16x2", "16x2s3"])
@pytest.mark.parametrize("splits", ["", "1", "3"])
def test_gemv_wgmma_tiled_same_bits(monkeypatch, dtype, tile, splits):
    """The wgmma GEMV's tiled form (two 4-D boxes of 64-byte pieces per stage, 64-byte swizzle;
    the A fragments read from the same bytes) gives the row-major weight's bits on every tile and
    K split: a last 128-feature tile that ends inside the map (N = 1008, 63 row tiles: the rest
    zero-filled), a ragged last scale block (K = 4224 at 256), block sizes 64..256, M across token
    tiles, bias, static_weight (the early weight stages under PDL); auto on the tiled weight."""
    monkeypatch.setenv("TORCHQUANT_FP8_WGMMA_TILE", tile)
    monkeypatch.setenv("TORCHQUANT_DQ_WGMMA_SPLITS", splits)
    gen = torch.Generator().manual_seed(19)
    for n, k, bs in [(1008, 4096 + 128, 256), (144, 1536 + 128, 64), (304, 2304, 192), (4096 + 16, 1024, 128)]:
        w_q, w_scale = make_weight(n, k, bs, gen)
        tq, ts = tiled(w_q, w_scale)
        bias = (torch.randn(n, generator=gen) * 4).to(dtype).cuda()
        for m in (1, 5, 16, 17, 33):
            x = torch.randn(m, k, generator=gen).to(dtype).cuda()
            b = bias if m % 2 else None
            want = run_gemv(x, w_q, w_scale, bs, b, "wgmma")
            assert_tiled_bits(x, tq, ts, bs, b, "wgmma", want, f"tiled wgmma {tile} S={splits} N={n} K={k} bs={bs} M={m}")
            if m in (1, 16, 33) and splits == "":
                check_against_reference(want, x, w_q, w_scale, bs, b, f"wgmma {tile} N={n} M={m}")
    monkeypatch.setenv("TORCHQUANT_FP8_WGMMA_BF16", "reseat")
    if dtype == torch.bfloat16:
        with pytest.raises(RuntimeError, match="TORCHQUANT_FP8_WGMMA_BF16=reseat .* row-major weight only"):
            OPS.fp8_block_gemv(x, tq, ts, block_size=bs, path="wgmma", tiled=True)


@WGMMA
@pytest.mark.parametrize("dtype", DTYPES)
def test_gemv_tiled_auto_wgmma(monkeypatch, dtype):
    """Auto on the tiled weight of a layer wide enough for the wgmma GEMV (66 feature tiles of 128:
    at least half the SMs of an H100 / H200): at M = 9..16 the wgmma GEMV's tiled form on wide-DRAM
    cards (the H200), the ring kernel's on narrow-DRAM ones (the H100), each with its kernel's
    row-major bits; at M = 1..8 the direct GEMV or the ring."""
    monkeypatch.delenv("TORCHQUANT_FP8_WGMMA_TILE", raising=False)
    monkeypatch.delenv("TORCHQUANT_DQ_WGMMA_SPLITS", raising=False)
    gen = torch.Generator().manual_seed(53)
    n, k, bs = 8448, 1024, 128
    w_q, w_scale = make_weight(n, k, bs, gen)
    tq, ts = tiled(w_q, w_scale)
    assert rows_auto_wgmma(16, n, k, bs)
    for m in (1, 8, 9, 16):
        x = torch.randn(m, k, generator=gen).to(dtype).cuda()
        check_tiled_auto(monkeypatch, x, w_q, w_scale, tq, ts, bs, None, f"tiled auto wide {dtype} M={m}")


@WGMMA
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("extra_tiles,m,want_stages", [(1, 16, 3), (0, 16, 5), (-7, 16, 5),
                                                       (None, 17, 3), (None, 9, 5)])
def test_gemv_wgmma_ring_depth_rule(monkeypatch, dtype, extra_tiles, m, want_stages):
    """Path 'wgmma' with the tile unset: the two-CTA tile keeps 3 stages where the grid has more
    CTAs (feature tiles x token tiles x K splits) than SMs, else 5 (the template's first argument
    in the kernel name; None: half the SMs' worth of feature tiles, so M = 17 makes two token
    tiles). Its output is bit-identical to the other depth's, forced, and within the bound."""
    monkeypatch.delenv("TORCHQUANT_FP8_WGMMA_TILE", raising=False)
    monkeypatch.delenv("TORCHQUANT_DQ_WGMMA_SPLITS", raising=False)
    sms = sm_count()
    tiles = sms // 2 + 1 if extra_tiles is None else sms + extra_tiles
    n, k, bs = 128 * tiles - 3, 512, 128  # 4 stages of K: never split (>= half the SMs of tiles)
    gen = torch.Generator().manual_seed(31 + tiles + m)
    w_q, w_scale = make_weight(n, k, bs, gen)
    x = torch.randn(m, k, generator=gen).to(dtype).cuda()
    poison_cuda()
    out = {}
    names = kernels_launched(lambda: out.setdefault("auto", run_gemv(x, w_q, w_scale, bs, None,
                                                                     "wgmma")))
    flat = [nm.replace(" ", "") for nm in names if "dq_gemv_sm90a_kernel" in nm]
    assert len(flat) == 1, names
    assert f"DqGemvConfig<{want_stages},2>" in flat[0], flat[0]
    monkeypatch.setenv("TORCHQUANT_FP8_WGMMA_TILE", "16x2" if want_stages == 3 else "16x2s3")
    other = run_gemv(x, w_q, w_scale, bs, None, "wgmma")
    assert torch.equal(out["auto"], other), f"tiles={tiles} M={m}"
    check_against_reference(out["auto"], x, w_q, w_scale, bs, None, f"tiles={tiles} M={m}")


@WGMMA
@pytest.mark.parametrize("K,want", [(8192, "3"), (4096, "1")])
def test_gemv_wgmma_split_rule(monkeypatch, K, want):
    """The wgmma GEMV's K split (dq_gemm_sm90a.cu gemv_splits, shared with nvfp4's GEMV) on 2/3 of
    the SMs' worth of feature tiles at M = 16: 3 splits where each keeps >= 1536 of K, none at
    K = 4096. Auto is bit-identical to that split forced (1 and 3 splits differ in their bits)
    and within the bound."""
    monkeypatch.delenv("TORCHQUANT_FP8_WGMMA_TILE", raising=False)
    tiles = 2 * sm_count() // 3
    n, bs = 128 * tiles - 5, 128
    gen = torch.Generator().manual_seed(41 + K)
    w_q, w_scale = make_weight(n, K, bs, gen)
    x = torch.randn(16, K, generator=gen).to(torch.bfloat16).cuda()
    monkeypatch.delenv("TORCHQUANT_DQ_WGMMA_SPLITS", raising=False)
    y = run_gemv(x, w_q, w_scale, bs, None, "wgmma")
    forced = {}
    for s in ("1", "3"):
        monkeypatch.setenv("TORCHQUANT_DQ_WGMMA_SPLITS", s)
        forced[s] = run_gemv(x, w_q, w_scale, bs, None, "wgmma")
    assert not torch.equal(forced["1"], forced["3"])
    assert torch.equal(y, forced[want]), (K, want)
    check_against_reference(y, x, w_q, w_scale, bs, None, f"split rule K={K}")


@WGMMA
@pytest.mark.parametrize("dtype", DTYPES)
def test_gemv_auto_wgmma_decode(dtype):
    """The automatic choice at M = 9..16 on a layer wide enough for the wgmma path (66
    feature tiles: at least half the SMs of an H100 / H200), against the forced ring kernel:
    both within the bound."""
    gen = torch.Generator().manual_seed(23)
    n, k, bs = 8448 + 5, 1024, 128
    w_q, w_scale = make_weight(n, k, bs, gen)
    for m in (9, 12, 16):
        x = torch.randn(m, k, generator=gen).to(dtype).cuda()
        for kernel in ("auto", "mma"):
            y = run_gemv(x, w_q, w_scale, bs, None, kernel)
            check_against_reference(y, x, w_q, w_scale, bs, None, f"{kernel} {dtype} M={m}")


@WGMMA
@pytest.mark.parametrize("dtype", DTYPES)
def test_gemv_auto_m5_threshold_knob(monkeypatch, dtype):
    """M = 5..8: auto keeps the ring kernel below 256M weights (bit-identical to path 'mma');
    TORCHQUANT_FP8_WGMMA_M5_MIN=1 (1M weights) sends this 8.6M-weight layer to the wgmma GEMV
    (bit-identical to path 'wgmma'), and both stay within the bound."""
    gen = torch.Generator().manual_seed(29)
    n, k, bs = 8448 + 5, 1024, 128
    w_q, w_scale = make_weight(n, k, bs, gen)
    for m in (5, 8):
        x = torch.randn(m, k, generator=gen).to(dtype).cuda()
        monkeypatch.delenv("TORCHQUANT_FP8_WGMMA_M5_MIN", raising=False)
        y = run_gemv(x, w_q, w_scale, bs, None, "auto")
        assert torch.equal(y, run_gemv(x, w_q, w_scale, bs, None, "mma")), f"default M={m}"
        monkeypatch.setenv("TORCHQUANT_FP8_WGMMA_M5_MIN", "1")
        y = run_gemv(x, w_q, w_scale, bs, None, "auto")
        assert torch.equal(y, run_gemv(x, w_q, w_scale, bs, None, "wgmma")), f"knob M={m}"
        check_against_reference(y, x, w_q, w_scale, bs, None, f"auto M5 knob {dtype} M={m}")


@WGMMA
def test_gemv_wgmma_bad_knobs(monkeypatch):
    gen = torch.Generator().manual_seed(2)
    w_q, w_scale = make_weight(16, 128, 64, gen)
    x = torch.randn(1, 128, generator=gen).bfloat16().cuda()
    monkeypatch.setenv("TORCHQUANT_FP8_WGMMA_TILE", "32x1")
    with pytest.raises(RuntimeError, match="TORCHQUANT_FP8_WGMMA_TILE='32x1'"):
        OPS.fp8_block_gemv(x, w_q, w_scale, block_size=64, path="wgmma")
    monkeypatch.setenv("TORCHQUANT_FP8_WGMMA_TILE", "")
    monkeypatch.setenv("TORCHQUANT_FP8_WGMMA_BF16", "f64")
    with pytest.raises(RuntimeError, match="TORCHQUANT_FP8_WGMMA_BF16='f64'"):
        OPS.fp8_block_gemv(x, w_q, w_scale, block_size=64, path="wgmma")


@pytest.mark.skipif(HAS_MMA, reason="the device supports mma")
def test_gemv_forced_mma_below_sm80_raises():
    gen = torch.Generator().manual_seed(2)
    w_q, w_scale = make_weight(16, 64, 64, gen)
    x = torch.randn(1, 64, generator=gen).half().cuda()
    with pytest.raises(RuntimeError, match="compute capability 8.0"):
        OPS.fp8_block_gemv(x, w_q, w_scale, block_size=64, path="mma")


# ------------------------------------------------ quantize / dequantize --
def _same_outcome(fn_cpu, fn_cuda):
    """Run both; both must raise the same message or both must succeed."""
    err_cpu = err_cuda = None
    out_cpu = out_cuda = None
    try:
        out_cpu = fn_cpu()
    except RuntimeError as e:
        err_cpu = str(e).split("\n")[0]
    try:
        out_cuda = fn_cuda()
    except RuntimeError as e:
        err_cuda = str(e).split("\n")[0]
    assert (err_cpu is None) == (err_cuda is None), (err_cpu, err_cuda)
    if err_cpu is not None:
        assert err_cpu == err_cuda
    return out_cpu, out_cuda


def _crafted_rows(k: int, bs: int) -> torch.Tensor:
    """Rows whose every block has amax 448 (scale exactly 1), the other values
    sitting on e4m3 rounding midpoints (normal and subnormal) or underflowing
    to +-0, so round-to-nearest-even and the sign of zero are exercised."""
    vals = [1.0625, 1.1875, -1.0625, 400.0, -400.0, 2 ** -10, 3 * 2 ** -10, -3 * 2 ** -10,
            -(2 ** -12), 2 ** -12, 5 * 2 ** -10, 0.0, -0.0, 240.0, 232.0, 2 ** -6,
            2 ** -6 - 2 ** -11, 15 * 2 ** -11, -448.0]
    row = torch.tensor(vals * (k // len(vals) + 1))[:k]
    row[::bs] = 448.0
    return torch.stack([row, -row])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("bs", [16, 48, 128, 256])
@pytest.mark.parametrize("n,k", [(1, 16), (7, 100), (33, 4096 + 16), (64, 300)])
def test_quantize_matches_cpu(dtype, bs, n, k):
    gen = torch.Generator().manual_seed(n + k + bs)
    nb = math.ceil(k / bs)
    mag = torch.exp2(torch.randint(-20, 10, (n, nb), generator=gen).float())
    w = torch.randn(n, k, generator=gen) * mag.repeat_interleave(bs, dim=1)[:, :k]
    if n > 2:
        w[1] = 0.0  # all-zero blocks: scale 1
        w[2, : min(k, bs)] = 0.0
    w = torch.cat([w, _crafted_rows(k, bs)]).to(dtype)
    poison_output((w.shape[0], k), torch.uint8)
    got_cpu, got_cuda = _same_outcome(
        lambda: OPS.quantize_fp8_block(w, block_size=bs),
        lambda: OPS.quantize_fp8_block(w.cuda(), block_size=bs),
    )
    if got_cpu is None:
        return
    q_cpu, s_cpu = got_cpu
    q_cuda, s_cuda = got_cuda
    assert q_cuda.dtype == torch.float8_e4m3fn and s_cuda.dtype == torch.float32
    assert torch.equal(s_cuda.cpu().view(torch.int32), s_cpu.view(torch.int32))
    assert torch.equal(q_cuda.cpu().view(torch.uint8), q_cpu.view(torch.uint8))


def test_quantize_tiny_blocks_match_cpu():
    """A block whose amax / 448 underflows to 0 gets scale 1, like a zero block."""
    w = torch.zeros(3, 48)
    w[0, :16] = 1e-44   # fp32 subnormals: 1e-44 / 448 underflows
    w[1, 16:32] = -3e-45
    w[2] = torch.randn(48)
    q_cpu, s_cpu = OPS.quantize_fp8_block(w, block_size=16)
    poison_output((3, 48), torch.uint8)
    q_cuda, s_cuda = OPS.quantize_fp8_block(w.cuda(), block_size=16)
    assert torch.equal(s_cuda.cpu().view(torch.int32), s_cpu.view(torch.int32))
    assert torch.equal(q_cuda.cpu().view(torch.uint8), q_cpu.view(torch.uint8))


def test_quantize_rejects_non_finite():
    w = torch.randn(4, 64)
    w[2, 5] = float("nan")
    with pytest.raises(RuntimeError, match="NaN or Inf"):
        OPS.quantize_fp8_block(w.cuda(), block_size=16)
    w[2, 5] = float("inf")
    with pytest.raises(RuntimeError, match="NaN or Inf"):
        OPS.quantize_fp8_block(w.cuda(), block_size=16)


@pytest.mark.parametrize("out_dtype", [None, torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("bs", [16, 80, 128])
@pytest.mark.parametrize("n,k", [(3, 16), (17, 200), (64, 1024 + 48)])
def test_dequantize_matches_cpu(out_dtype, bs, n, k):
    gen = torch.Generator().manual_seed(n * k + bs)
    codes = torch.randint(0, 256, (n, k), generator=gen, dtype=torch.uint8)
    nan = (codes & 0x7F) == 0x7F
    codes[nan] = 0x42  # NaN codes are checked separately below
    w_q = codes.view(torch.float8_e4m3fn)
    nb = math.ceil(k / bs)
    scale = torch.exp2(torch.randn(n, nb, generator=gen) * 8).float()
    kw = {} if out_dtype is None else {"out_dtype": out_dtype}
    poison_output((n, k), out_dtype or torch.float32)
    d_cpu, d_cuda = _same_outcome(
        lambda: OPS.dequantize_fp8_block(w_q, scale, block_size=bs, **kw),
        lambda: OPS.dequantize_fp8_block(w_q.cuda(), scale.cuda(), block_size=bs, **kw),
    )
    assert d_cuda.dtype == (out_dtype or torch.float32)
    assert torch.equal(d_cuda.cpu(), d_cpu)


@pytest.mark.parametrize("out_dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("offset", [0, 1, 8])
@pytest.mark.parametrize("bs,n,k", [(16, 1, 16), (48, 33, 4096 + 16), (256, 7, 8192)])
def test_dequantize_pointer_alignment(out_dtype, offset, bs, n, k):
    """The vectorized kernel (16-byte aligned w_q, K % 16 == 0) and the
    elementwise one (any other pointer) give the CPU op's bits."""
    gen = torch.Generator().manual_seed(n + k + bs + offset)
    codes = torch.randint(0, 256, (n, k), generator=gen, dtype=torch.uint8)
    codes[(codes & 0x7F) == 0x7F] = 0x3A
    w_q = codes.view(torch.float8_e4m3fn)
    scale = torch.exp2(torch.randn(n, math.ceil(k / bs), generator=gen) * 8).float()
    want = OPS.dequantize_fp8_block(w_q, scale, block_size=bs, out_dtype=out_dtype)
    poison_output((n, k), out_dtype)
    got = OPS.dequantize_fp8_block(misaligned(w_q.cuda(), offset), scale.cuda(), block_size=bs,
                                   out_dtype=out_dtype)
    assert torch.equal(got.cpu(), want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("M,K,bs", [(1, 128, 128), (2048, 1024, 128), (33, 200, 48), (5, 8192, 256)])
def test_quantize_fp8_act_matches_cpu(dtype, M, K, bs):
    """The online activation quantizer: codes and column-major scales
    bit-identical to the CPU op, a NaN / Inf block included."""
    gen = torch.Generator().manual_seed(M + K + bs)
    x = (torch.randn(M, K, generator=gen) * torch.logspace(-4, 2, K)).to(dtype)
    x[0, : min(K, bs)] = 0.0
    if M > 2:
        x[2, 1] = float("nan")
        x[M - 1, K - 1] = float("inf")
    q_cpu, s_cpu = OPS.quantize_fp8_act(x, bs)
    poison_output((M, K), torch.float32)
    q, s = OPS.quantize_fp8_act(x.cuda(), bs)
    assert s.stride() == (1, M) and s.shape == s_cpu.shape
    assert torch.equal(q.cpu().view(torch.uint8), q_cpu.view(torch.uint8))
    assert torch.allclose(s.cpu(), s_cpu, rtol=0, atol=0, equal_nan=True)  # exact; NaN where NaN
    # x one element off its allocation's alignment: the elementwise kernel, same bits
    xm = misaligned(x.cuda(), x.element_size())
    q2, s2 = OPS.quantize_fp8_act(xm, bs)
    assert torch.equal(q2.cpu().view(torch.uint8), q_cpu.view(torch.uint8))
    assert torch.allclose(s2.cpu(), s_cpu, rtol=0, atol=0, equal_nan=True)


def test_dequantize_nan_codes():
    for k in (4, 16):  # elementwise kernel (K % 16 != 0), vectorized kernel
        row = [0x7F, 0xFF, 0x00, 0x80] + [0x38] * (k - 4)
        w_q = torch.tensor([row], dtype=torch.uint8).view(torch.float8_e4m3fn)
        for od in (torch.float32, torch.float16, torch.bfloat16):
            out = OPS.dequantize_fp8_block(w_q.cuda(), torch.ones(1, 1, device="cuda"), block_size=16,
                                           out_dtype=od).cpu().float()
            assert torch.isnan(out[0, :2]).all() and out[0, 2] == 0 and out[0, 3] == 0
            assert torch.signbit(out[0, 3]) and (out[0, 4:] == 1.0).all()


def test_quantize_dequantize_bad_inputs():
    w = torch.randn(8, 64, device="cuda")
    with pytest.raises(RuntimeError, match="block_size"):
        OPS.quantize_fp8_block(w, block_size=24)
    q, s = OPS.quantize_fp8_block(w, block_size=32)
    with pytest.raises(RuntimeError, match="scale is on"):
        OPS.dequantize_fp8_block(q, s.cpu(), block_size=32)
    with pytest.raises(RuntimeError, match="scale must be"):
        OPS.dequantize_fp8_block(q, s, block_size=16)
