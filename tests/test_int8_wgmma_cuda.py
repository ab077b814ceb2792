"""The Hopper wgmma INT8 GEMM (torch.ops.torchquant._int8_gemm_sm90a) against the CPU int8_matmul.

The integer accumulation is exact and the epilogue is specified operation by operation, so the
gate is bit equality with the CPU op on .cpu() copies of the same arguments, never a tolerance.
Inputs are fresh random codes and scales (never zeros); outputs start as NaN (poison_cuda) so a
tile or edge the kernel forgets to write cannot pass. Every tile configuration is forced once
through TORCHQUANT_INT8_WGMMA_TILE, including the odd M-tile counts that leave a padding CTA in a
cluster, N below one W half (a wholly out-of-bounds TMA box) and K tails inside a 128-byte k-block.
Split-K (partial sums added into an int32 workspace, the last split of a tile finishing it) is
forced through TORCHQUANT_INT8_WGMMA_SPLITS on every tile configuration, with ragged last splits,
and checked under CUDA-graph replay (the workspace and counters must be re-zeroed every time).
The cluster K split (2, 4 or 8 CTAs of a cluster each take a share of K and add their partials
through distributed shared memory) is forced on ragged K ranges, empty ranks (fewer k-blocks than
CTAs), several tiles per cluster (the partial buffers' ready / free phases) and graph replay.
"""

import itertools

import pytest
import torch

import torchquant  # noqa: F401  (loads torchquant._C and torchquant._C_sm90a)

from conftest import poison_cuda, requires_sm90a

ops = torch.ops.torchquant
ENV = "TORCHQUANT_INT8_WGMMA_TILE"
SPLITS_ENV = "TORCHQUANT_INT8_WGMMA_SPLITS"
# Tiles whose partial sums go through the int32 workspace when split (SPLITS_ENV) ...
WS_CONFIGS = ["128x256c2", "128x256c1", "128x128c1", "64x128c1", "64x64c1"]
# ... and the 64-row tiles whose K range a cluster of 2 / 4 / 8 CTAs splits (SPLITS_ENV ignored).
CLUSTER_CONFIGS = ["64x64k2", "64x64k4", "64x64k8", "64x128k2", "64x128k4", "64x128k8"]
CONFIGS = WS_CONFIGS + CLUSTER_CONFIGS


pytestmark = requires_sm90a("_int8_gemm_sm90a")


@pytest.fixture(autouse=True)
def _default_config(monkeypatch):
    """Each test starts from the automatic tile and split choice unless it forces one."""
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.delenv(SPLITS_ENV, raising=False)
    monkeypatch.delenv("TORCHQUANT_WGMMA_VEC", raising=False)


def _make(M, N, K, *, seed, act="row", weight="row", zero=None, colsum=True, bias=None):
    """Random int8 operands and epilogue tensors on the CPU.

    act / weight: "row" (per token / per channel) or "one" (a single element);
    zero: None (symmetric), "row" or "one"; colsum: pass w_colsum (True) or let the op compute it;
    bias: None or a float dtype.
    """
    g = torch.Generator().manual_seed(seed)
    a_q = torch.randint(-128, 128, (M, K), generator=g, dtype=torch.int8)
    w_q = torch.randint(-128, 128, (N, K), generator=g, dtype=torch.int8)
    # Scales of the size real quantizers produce (amax / 127), never zero.
    a_scale = torch.rand(M if act == "row" else (), generator=g) * 0.05 + 1e-3
    w_scale = torch.rand(N if weight == "row" else (), generator=g) * 0.01 + 1e-4
    a_zero = None
    if zero is not None:
        a_zero = torch.randint(-128, 128, (M,) if zero == "row" else (), generator=g, dtype=torch.int32)
    w_colsum = w_q.sum(1, dtype=torch.int32) if (zero is not None and colsum) else None
    b = None
    if bias is not None:
        b = (torch.randn(N, generator=g) * 2.0).to(bias)
    return a_q, a_scale, a_zero, w_q, w_scale, w_colsum, b


def _to(t, device):
    return None if t is None else t.to(device)


def _run_and_compare(args, out_dtype):
    """_int8_gemm_sm90a on the GPU vs int8_matmul on the CPU: bitwise equal."""
    ref = ops.int8_matmul(*args, out_dtype, "auto")
    cuda_args = [_to(t, "cuda") for t in args]
    poison_cuda()
    out = ops._int8_gemm_sm90a(*cuda_args, out_dtype)
    torch.cuda.synchronize()
    _assert_same_bits(out, ref)


def _assert_same_bits(out, ref):
    """A CUDA result vs the CPU reference: same dtype and shape, all outputs written, equal bits."""
    assert out.dtype == ref.dtype and out.shape == ref.shape and out.is_cuda
    out = out.cpu()
    assert not torch.isnan(out).any(), "unwritten (NaN-poisoned) outputs"
    bits = torch.int32 if out.dtype == torch.float32 else torch.int16
    same = out.view(bits) == ref.view(bits)
    if not bool(same.all()):
        bad = (~same).nonzero()
        m, n = bad[0].tolist()
        pytest.fail(
            f"{int((~same).sum())} of {same.numel()} outputs differ; first at [{m}, {n}]: "
            f"got {out[m, n].item()!r}, want {ref[m, n].item()!r}"
        )


# ------------------------------------------------------------- shapes ----
@pytest.mark.parametrize("K", [16, 48, 4096 + 16])
@pytest.mark.parametrize("N", [8, 129, 1000, 4096])
@pytest.mark.parametrize("M", [1, 17, 64, 127, 300, 2048])
def test_shapes_bit_exact(M, N, K):
    # Asymmetric activation with a bias: every step of the epilogue runs; fp32 out so no
    # difference can hide in the final rounding.
    args = _make(M, N, K, seed=M * 7919 + N * 31 + K, zero="row", bias=torch.float32)
    _run_and_compare(args, torch.float32)


# ------------------------------------------------------------ epilogue ----
_EPILOGUES = [
    (act, weight, zero, colsum, bias, out)
    for act, weight, (zero, colsum), bias, out in itertools.product(
        ["row", "one"],
        ["row", "one"],
        [(None, True), ("row", True), ("row", False), ("one", True), ("one", False)],
        [None, torch.float16, torch.bfloat16, torch.float32],
        [torch.float32, torch.float16, torch.bfloat16],
    )
]


@pytest.mark.parametrize("act,weight,zero,colsum,bias,out_dtype", _EPILOGUES)
# N = 304: 16-bit outputs take the 16-byte regrouped stores (N % 8 == 0); 300: 4-byte pairs;
# 257: single elements.
@pytest.mark.parametrize("M,N,K", [(130, 300, 272), (33, 257, 160), (130, 304, 272)])
def test_epilogue_combinations(M, N, K, act, weight, zero, colsum, bias, out_dtype):
    args = _make(M, N, K, seed=11, act=act, weight=weight, zero=zero, colsum=colsum, bias=bias)
    _run_and_compare(args, out_dtype)


def test_default_out_dtype_is_float32():
    args = _make(64, 64, 64, seed=5)
    out = ops._int8_gemm_sm90a(*[_to(t, "cuda") for t in args])
    assert out.dtype == torch.float32


# ------------------------------------------------------- tile configs ----
@pytest.mark.parametrize(
    "M,N,K",
    [
        (1, 8, 16),          # one partial tile; the second W half is wholly out of bounds
        (300, 129, 48),      # 3 M tiles: the last cluster's second CTA is a padding tile
        (257, 520, 128),     # one exact k-block, odd tile edges in M and N
        (300, 1001, 4096 + 16),  # odd N: scalar stores; 33 k-blocks wrap the stage ring
        (2048, 4096, 4096 + 16),  # several tiles per persistent CTA, phases across tiles
    ],
)
@pytest.mark.parametrize("config", CONFIGS)
def test_forced_tile_configs(monkeypatch, config, M, N, K):
    monkeypatch.setenv(ENV, config)
    args = _make(M, N, K, seed=3 + M + N + K, zero="row", bias=torch.bfloat16)
    _run_and_compare(args, torch.float16)


@pytest.mark.parametrize("vec", ["0", "1"])
@pytest.mark.parametrize("config", ["128x128c1", "128x256c2", "64x64c1", "64x64k4"])
@pytest.mark.parametrize("out_dtype", [torch.float16, torch.bfloat16])
def test_vec_store_knob(monkeypatch, config, out_dtype, vec):
    # N % 8 == 0 with a 16-bit output: the regrouped 16-byte stores by default, the 4-byte pair
    # stores under TORCHQUANT_WGMMA_VEC=0; both must give the CPU op's bits, ragged M.
    monkeypatch.setenv(ENV, config)
    monkeypatch.setenv("TORCHQUANT_WGMMA_VEC", vec)
    args = _make(200, 1096, 2048 + 16, seed=23, zero="row", bias=torch.float32)
    _run_and_compare(args, out_dtype)


# ------------------------------------------------------------ split-K ----
@pytest.mark.parametrize(
    "M,N,K",
    [
        (64, 4096, 4096),        # the small-M decode shape split-K is for: 32 k-blocks
        (300, 1001, 4096 + 16),  # odd N, a K tail in the last split, 3 M tiles (padding CTA in c2)
        (1, 8, 2048),            # one partial tile; 5 splits of 16 k-blocks normalize to 4
    ],
)
@pytest.mark.parametrize("splits", [2, 3, 5])  # odd counts leave a ragged (shorter) last split
@pytest.mark.parametrize("config", WS_CONFIGS)
def test_forced_splits_bit_exact(monkeypatch, config, splits, M, N, K):
    # Integer partial sums are exact and order-free: any split must give the unsplit bits.
    monkeypatch.setenv(ENV, config)
    monkeypatch.setenv(SPLITS_ENV, str(splits))
    args = _make(M, N, K, seed=17 * splits + M + N + K, zero="row", bias=torch.float16)
    _run_and_compare(args, torch.float16)


@pytest.mark.parametrize(
    "M,N,K",
    [
        (64, 4096, 4096 + 16),   # 64 x 64 tiles (64 <= one per SM), unsplit
        (64, 1024, 4096 + 16),   # 16 tiles, 33 k-blocks: cluster K split over 4 CTAs
        (100, 1024, 4096),       # 32 tiles: split over 2
        (64, 4096, 8192 + 48),   # 64 tiles, 65 k-blocks: split over 2 (128 CTAs)
        (64, 1024, 2048),        # 16 tiles but 16 k-blocks: unsplit
        (100, 6144, 272),        # 2 x 96 64 x 64 tiles > 132: 64 x 128 (96 tiles)
        (33, 14336, 272),        # 224 64 x 64 tiles: 64 x 128 (112)
        (17, 28672, 272),        # one M tile, 224 64 x 128 tiles past one wave: still 64 x 128
        (64, 16896 + 8, 272),    # one M tile, 133 64 x 128 tiles (ragged last): 64 x 128
        (256, 2048, 272),        # 4 M tiles x 32: 128 64 x 64 tiles
        (129, 4096, 272),        # 3 x 64 64 x 64 tiles > 132: 64 x 128 (96), ragged last M tile
        (128, 14336, 272),       # 224 64 x 128 tiles: past one wave, the 128-row rule (128 x 128)
        (300, 4096, 272),        # 5 x 32 64 x 128 tiles > 132: the 128-row rule
    ],
)
def test_auto_tile_rule_bit_exact(M, N, K):
    # No knob: each branch of choose_config's 64-row rule and its fall-through.
    args = _make(M, N, K, seed=M + N + K, zero="row", bias=torch.bfloat16)
    _run_and_compare(args, torch.bfloat16)


@pytest.mark.parametrize("M,N,K", [(64, 4096, 8192 + 16), (64, 4096, 4096)])
def test_auto_split_bit_exact(M, N, K):
    # No knob: 64 x 64 tiles (64 of them); K >= 8192 gets the cluster K split over 2 CTAs
    # (128 CTAs), K = 4096 stays unsplit.
    args = _make(M, N, K, seed=64 + K, zero="row", bias=torch.float16)
    _run_and_compare(args, torch.float16)


@pytest.mark.parametrize(
    "M,N,K",
    [
        (64, 1024, 8192 + 16),  # 65 k-blocks: ranks of 8 and 9 (k8), a K tail in the last one
        (33, 768, 2048),        # 16 k-blocks, 12 or 6 tiles
        (17, 100, 48),          # one k-block: every rank but one has an empty range
        (250, 1001, 1040),      # 4 M tiles, odd N (scalar stores), 9 k-blocks
        (2048, 2048, 512),      # more tiles than clusters: each cluster reuses its buffers
    ],
)
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("config", CLUSTER_CONFIGS)
def test_cluster_ksplit_bit_exact(monkeypatch, config, out_dtype, M, N, K):
    monkeypatch.setenv(ENV, config)
    args = _make(M, N, K, seed=5 * M + N + K, zero="row", bias=torch.bfloat16)
    _run_and_compare(args, out_dtype)


@pytest.mark.parametrize("config", ["64x64k8", "64x128k2"])
def test_cluster_ksplit_cuda_graph_replay(monkeypatch, config):
    # Barriers and partial buffers are set up inside each launch: replays with new inputs must
    # give the same bits as eager calls.
    monkeypatch.setenv(ENV, config)
    _check_graph_replays(64, 1024, 4096 + 16, seeds=(70, 71, 72))


def _capture(args, out_dtype):
    """One eager call (it also warms up the per-device setup), then the op captured
    into a CUDA graph on a side stream: (eager result, graph, the graph's output)."""
    eager = ops._int8_gemm_sm90a(*args, out_dtype)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph):
            captured = ops._int8_gemm_sm90a(*args, out_dtype)
    return eager, graph, captured


def _check_graph_replays(M, N, K, seeds):
    """Captures the op on the operands of seeds[0], then for each later seed copies new operands
    in place, poisons the graph's output and replays: the bits must equal the CPU op's."""

    def make(seed):
        return _make(M, N, K, seed=seed, zero="row", bias=torch.float16)

    args = [_to(t, "cuda") for t in make(seeds[0])]
    _, graph, captured = _capture(args, torch.float16)
    for seed in seeds[1:]:
        new = make(seed)
        for dst, src in zip(args, new):
            dst.copy_(src)
        captured.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        _assert_same_bits(captured, ops.int8_matmul(*new, torch.float16, "auto"))


def test_split_cuda_graph_capture_rezeroes_workspace(monkeypatch):
    # The workspace and counters are allocated and zeroed inside the op; under capture the
    # memsets are part of the graph, so every replay must start from zero. Two replays with new
    # inputs copied in place: stale partial sums or counters would break the second.
    monkeypatch.setenv(SPLITS_ENV, "3")
    _check_graph_replays(300, 1000, 2048 + 16, seeds=(40, 41, 42))


def test_bad_splits_knob_raises(monkeypatch):
    monkeypatch.setenv(SPLITS_ENV, "0")
    args = [_to(t, "cuda") for t in _make(16, 16, 2048, seed=1)]
    with pytest.raises(RuntimeError, match=SPLITS_ENV):
        ops._int8_gemm_sm90a(*args)


def test_unknown_tile_config_raises(monkeypatch):
    monkeypatch.setenv(ENV, "64x64")
    args = [_to(t, "cuda") for t in _make(16, 16, 16, seed=1)]
    with pytest.raises(RuntimeError, match="TORCHQUANT_INT8_WGMMA_TILE"):
        ops._int8_gemm_sm90a(*args)


# ------------------------------------------------------------- inputs ----
def test_misaligned_operands_are_copied():
    # TMA needs 16-byte aligned bases: views one byte into a buffer take the copy path.
    M, N, K = 70, 200, 96
    a_q, a_scale, a_zero, w_q, w_scale, w_colsum, b = _make(M, N, K, seed=21, zero="one")
    a_buf = torch.empty(M * K + 1, dtype=torch.int8, device="cuda")
    w_buf = torch.empty(N * K + 3, dtype=torch.int8, device="cuda")
    a_view = a_buf[1:].view(M, K)
    w_view = w_buf[3:].view(N, K)
    a_view.copy_(a_q)
    w_view.copy_(w_q)
    assert a_view.data_ptr() % 16 != 0 and w_view.data_ptr() % 16 != 0
    ref = ops.int8_matmul(a_q, a_scale, a_zero, w_q, w_scale, w_colsum, b, None, "auto")
    poison_cuda()
    out = ops._int8_gemm_sm90a(a_view, a_scale.cuda(), a_zero.cuda(), w_view, w_scale.cuda(), w_colsum.cuda())
    assert torch.equal(out.cpu().view(torch.int32), ref.view(torch.int32))


def test_k_not_multiple_of_16_raises():
    args = [_to(t, "cuda") for t in _make(32, 32, 40, seed=2)]
    with pytest.raises(RuntimeError, match="multiple of 16"):
        ops._int8_gemm_sm90a(*args)


def test_validation_matches_int8_matmul():
    a_q, a_scale, a_zero, w_q, w_scale, w_colsum, b = [_to(t, "cuda") for t in _make(32, 48, 64, seed=4)]
    with pytest.raises(RuntimeError, match="int8_matmul: a_q must be"):
        ops._int8_gemm_sm90a(a_q.float(), a_scale, a_zero, w_q, w_scale)
    with pytest.raises(RuntimeError, match="their K differ"):
        ops._int8_gemm_sm90a(a_q, a_scale, a_zero, w_q[:, :32].contiguous(), w_scale)
    with pytest.raises(RuntimeError, match="w_scale must hold one element"):
        ops._int8_gemm_sm90a(a_q, a_scale, a_zero, w_q, w_scale[:5].contiguous())


def test_cuda_graph_capture():
    # No host synchronization inside the op: it records into a CUDA graph and replays exactly.
    args = [_to(t, "cuda") for t in _make(300, 1000, 512, seed=9, zero="row", bias=torch.float16)]
    eager, graph, captured = _capture(args, torch.bfloat16)
    captured.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(captured.view(torch.int16), eager.view(torch.int16))


# ------------------------------------------- A boxes cut to the rows of M ----
@pytest.mark.parametrize("abox", ["auto", "0"])
@pytest.mark.parametrize("M", [1, 7, 8, 9, 16, 17, 33, 64, 65, 128])
@pytest.mark.parametrize("config", ["64x128c1", "64x64c1", "64x64k2", "64x128k4", "128x128c1", "128x256c1"])
def test_abox_knob_bit_exact(monkeypatch, config, M, abox):
    # By default a one-M-tile grid loads round_up(M, 8) rows of A per TMA box; nothing in the
    # launch writes the stage rows past it (they hold whatever shared memory held), and they may
    # reach only output rows >= M, which are never stored. TORCHQUANT_INT8_WGMMA_ABOX=0 loads the
    # tile's full box (TMA zero-fills past M). 33 k-blocks wrap every ring. M = 65 / 128 on 64-row
    # tiles: two M tiles, full boxes; on 128-row tiles one M tile.
    monkeypatch.setenv(ENV, config)
    if abox == "auto":
        monkeypatch.delenv("TORCHQUANT_INT8_WGMMA_ABOX", raising=False)
    else:
        monkeypatch.setenv("TORCHQUANT_INT8_WGMMA_ABOX", abox)
    args = _make(M, 1096 + 8, 4096 + 16, seed=5 * M + 11, zero="row", bias=torch.float32)
    _run_and_compare(args, torch.bfloat16)
