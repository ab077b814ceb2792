"""Shared test fixtures and helpers.

`poison_cuda()` makes the next CUDA allocations start out as NaN: it fills a
large block from the caching allocator with NaN and frees it, so an output a
kernel forgets to write reads back as NaN instead of a stale right answer.
"""

import os

import pytest
import torch

# pytest-xdist runs each worker as its own process, and torch gives every process one
# intra-op thread per core: 16 workers on the 16-core GPU machine ran 256 OpenMP threads
# on 16 cores for the float64 references (GPU runs: ~1.5 s per tiny GEMV check). Each
# worker gets its share of the cores instead.
_XDIST_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _XDIST_WORKERS > 1:
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // _XDIST_WORKERS))

HAS_CUDA = torch.cuda.is_available()
requires_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")


def poison_cuda(nbytes: int = 1 << 28) -> None:
    """Fill the caching allocator's free blocks with NaN (0xFF bytes).

    Both pools: one large block for the large pool, and many small blocks
    (<= 1 MiB requests are carved from 2 MiB small-pool segments)."""
    if not HAS_CUDA:
        return
    blocks = [torch.empty(nbytes, dtype=torch.uint8, device="cuda")]
    blocks += [torch.empty(1 << s, dtype=torch.uint8, device="cuda") for s in range(9, 21) for _ in range(4)]
    for b in blocks:
        b.fill_(0xFF)  # 0xFFFF is NaN in fp16/bf16, 0xFFFFFFFF NaN in fp32
    del blocks


@pytest.fixture
def seeded():
    torch.manual_seed(1234)
    return torch.Generator().manual_seed(1234)


def cuda_capability():
    if not HAS_CUDA:
        return (0, 0)
    return torch.cuda.get_device_capability()


def sm_count():
    """Streaming multiprocessors of the current CUDA device (launch-rule tests)."""
    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


def requires_sm90a(*op_names):
    """Skip marker for the Hopper-only ops: a compute capability 9.0 GPU and every named op
    registered (torchquant._C_sm90a loaded)."""
    import torchquant  # noqa: F401  (loads torchquant._C and, where built, torchquant._C_sm90a)

    def registered(name):
        try:
            return hasattr(torch.ops.torchquant, name)
        except Exception:  # pragma: no cover - a broken registration
            return False

    ok = HAS_CUDA and cuda_capability() == (9, 0) and all(registered(n) for n in op_names)
    return pytest.mark.skipif(not ok, reason="needs a compute capability 9.0 GPU and the torchquant._C_sm90a module")


def graph_replay_matches_eager(run, replays=1, poison=False):
    """run() (a tensor or a tuple of tensors) twice eagerly: the same bits; once on a side stream
    (warm-up), then captured in a CUDA graph and replayed `replays` times: every replay gives the
    eager bits. poison: the captured outputs are filled with NaN before each replay, so a replay
    that skips a write cannot pass on what the previous one left."""
    def outs(r):
        return r if isinstance(r, tuple) else (r,)

    eager = outs(run())
    assert all(torch.equal(a, b) for a, b in zip(eager, outs(run())))
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        run()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = outs(run())
    for _ in range(replays):
        if poison:
            for c in captured:
                c.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert all(torch.equal(a, b) for a, b in zip(eager, captured))


def kernels_launched(fn):
    """Names of the CUDA kernels fn() launches (torch.profiler), in launch order."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]


def dram_bytes_per_sm_clk_x10(device=None):
    """csrc/common/device.h DeviceCaps::dram_bytes_per_sm_clk_x10 from torch's copy of the same
    device attributes: 2 x memory clock x bus bytes / (SMs x SM clock), x 10, rounded; 0 where a
    clock is not reported."""
    p = torch.cuda.get_device_properties(torch.cuda.current_device() if device is None else device)
    mem, bus, sm = (getattr(p, a, 0) or 0 for a in ("memory_clock_rate", "memory_bus_width", "clock_rate"))
    if mem <= 0 or bus <= 0 or sm <= 0:
        return 0
    return int(2.0 * mem * (bus / 8.0) / (p.multi_processor_count * sm) * 10.0 + 0.5)


def misaligned(t, offset):
    """A contiguous copy of t, on t's device, whose data pointer is `offset` bytes (a multiple of
    t's element size) past a 256-byte aligned address: offset 0 for the 16-byte vector paths,
    one element for the paths that copy or go elementwise."""
    nbytes = t.numel() * t.element_size()
    flat = torch.empty(nbytes + offset + 256, dtype=torch.uint8, device=t.device)
    start = (-flat.data_ptr()) % 256 + offset
    out = flat[start:start + nbytes].view(t.dtype).view(t.shape)
    out.copy_(t)
    assert out.is_contiguous() and out.data_ptr() % 256 == offset
    return out


def narrow_dram(device=None):
    """csrc/common/device.h narrow_dram: at most 15.0 DRAM bytes per SM clock (the H100 SXM's
    12.8; not the H200's ~18.5); a card reporting no clocks is not narrow. The direct GEMVs'
    rules (fp8, nvfp4) and the 2:4 M = 2 rule depend on it."""
    return 0 < dram_bytes_per_sm_clk_x10(device) <= 150


def nvfp4_direct_by_auto(layout, M, N, K, device=None):
    """csrc/nvfp4/nvfp4_gemv.cu direct_rule: whether nvfp4_gemv's path auto runs the direct GEMV on
    a weight in `layout` (3 only) on the current (or given) CUDA device: sm_80+, K % 128 == 0, then
    TORCHQUANT_NVFP4_DIRECT_MAX_M (M <= it) if set, else on grids of SMs .. 3 x SMs blocks of 16
    rows M <= 16 and K <= 4096; on grids of SMs .. 2 x SMs blocks with 4096 < K <= 16384 M <= 8
    where the card has at most 15.0 DRAM bytes per SM clock, else M = 4..8; on larger grids, on
    those cards M <= 8 with K <= 8192, on the others M = 5..8 with K <= 4096 where the grid of
    64-row blocks is SMs + 1 .. 2 x SMs."""
    dev = torch.cuda.current_device() if device is None else device
    if layout != 3 or K % 128 or torch.cuda.get_device_capability(dev) < (8, 0):
        return False
    knob = os.environ.get("TORCHQUANT_NVFP4_DIRECT_MAX_M", "").strip()
    if knob.lstrip("-").isdigit() and int(knob) != 0:
        return M <= int(knob)
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    blocks = (N + 15) // 16
    if blocks < sms:
        return False
    narrow = narrow_dram(dev)
    if M > 8:
        return M <= 16 and blocks <= 3 * sms and K <= 4096
    if blocks <= 3 * sms:
        if K <= 4096:
            return M <= 8
        return blocks <= 2 * sms and K <= 16384 and M <= 8 and (narrow or M >= 4)
    if narrow:
        return K <= 8192 and M <= 8
    return K <= 4096 and 5 <= M <= 8 and sms < (N + 63) // 64 <= 2 * sms
