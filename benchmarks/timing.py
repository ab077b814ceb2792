"""The one timing helper every torchquant benchmark uses.

GPU (`time_gpu`): decode kernels are bandwidth-bound, so a timing with the
weight already sitting in L2 flatters them. Each measurement therefore
rotates over R copies of the operands, enough that R * bytes_per_copy exceeds
8x the device's L2 (read from the device, 60 MiB on an H200): by the time a
launch comes back to copy 0, every line of it has been evicted. (3x, the
anchors' method, is not enough: with R * bytes ~5x L2 an H100 kept 7 % of an
nvfp4 GEMV's weight bytes in L2 from one pass over the rotation to the next,
and the per-replay cost of a graph launch, divided by a small R, added ~1 us
to cuBLAS's per-launch times; docs/nvfp4_gemv.md section 35.) The R
launches (launch i reads copy i) are captured in ONE CUDA graph, so what is
timed is the kernels back to back, not Python or the launch path. The graph
is replayed several times, each replay bracketed by CUDA events; a replay's
time / R is one sample of the per-launch time, and the median over replays
is reported, with the min and the spread (max - min) / median beside it.

CPU (`time_cpu`): torch.utils.benchmark.Timer.blocked_autorange, which picks
its own block size and reports a median over blocks.

`measure_read_ceiling()`: the bytes-based roofline of this device, measured,
not the datasheet: a read-only reduction (torch.sum over fp32, torch.amax over
int32) across 2 GiB, timed by `time_gpu`, as TB/s. Every decode kernel's
"% of ceiling" divides by the number measured in the same process.

Nothing here runs at import time; nothing here writes into the inputs.
"""

from __future__ import annotations

import argparse
import copy
import csv
import math
import os
import statistics
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

# Defaults shared by every benchmark.
# rotate over more than L2_FACTOR x L2 of operand bytes (TORCHQUANT_BENCH_L2_FACTOR overrides)
L2_FACTOR = float(os.environ.get("TORCHQUANT_BENCH_L2_FACTOR", "8"))
MIN_COPIES = 2  # even a 1 GB weight alternates between two copies
MAX_COPIES = 1024  # tiny shapes: cap the graph's length
MAX_ROTATION_BYTES = 12 << 30  # refuse to rotate over more than this
REPLAYS = 7  # graph replays whose per-launch times give the median
WARMUP = 2  # eager passes over all copies before capture (lazy inits, autotuning)
WARM_REPLAYS = 2  # untimed graph replays (first replay uploads the graph)
# ... and at least this long of untimed replays: the first row timed after a
# gap of host work (building a shape's inputs, the float64 check) read 5-15 %
# slower than the same kernel timed again right after it (every run of
# 2026-11-30: `tq auto` vs the forced path auto picks), i.e. the GPU was not
# yet back at its working clocks after idling. Short graphs (a few launches of
# tens of microseconds) need many replays to cover this.
WARM_MS = 30.0
READ_CEILING_BYTES = 2 << 30  # 2 GiB, as in ../shared/design/anchors.md


def l2_bytes(device: Optional[torch.device] = None) -> int:
    """L2 size of a CUDA device in bytes (cudaDeviceProp::l2CacheSize)."""
    dev = torch.device("cuda") if device is None else torch.device(device)
    return int(torch.cuda.get_device_properties(dev).L2_cache_size)


def copies_needed(
    bytes_per_copy: int,
    l2: int,
    l2_factor: float = L2_FACTOR,
    min_copies: int = MIN_COPIES,
    max_copies: int = MAX_COPIES,
) -> int:
    """Smallest R with R * bytes_per_copy > l2_factor * l2, within [min_copies, max_copies].

    Pure arithmetic, so it is testable without a GPU. Raises if max_copies
    cannot reach the target (a benchmark must not silently run hot).
    """
    if bytes_per_copy <= 0:
        raise ValueError(f"bytes_per_copy must be positive, got {bytes_per_copy}")
    target = l2_factor * l2
    r = max(min_copies, math.floor(target / bytes_per_copy) + 1)
    if r > max_copies:
        raise ValueError(
            f"{bytes_per_copy} B per copy needs {r} copies to exceed {l2_factor}x L2 "
            f"({l2} B), more than max_copies={max_copies}"
        )
    return r


def shared_copies(
    tensors: Sequence[Any], bytes_per_copy: int, min_copies: int = MIN_COPIES, l2_factor: float = L2_FACTOR
) -> Callable[[int], Tuple[Any, ...]]:
    """`make_inputs` for time_gpu when several timings read the same operands
    (a sweep over launch variants): the copies are made once (tensors cloned,
    modules deep-copied), as many as copies_needed asks for this device's L2
    (at least min_copies; pass the same min_copies and l2_factor to time_gpu),
    and every timing reuses them."""
    r = copies_needed(bytes_per_copy, l2_bytes(), l2_factor, min_copies)
    dup = lambda t: copy.deepcopy(t) if isinstance(t, torch.nn.Module) else t.clone()  # noqa: E731
    copies = [tuple(dup(t) for t in tensors) for _ in range(r)]
    return lambda i: copies[i % r]


def summarize(samples_us: Sequence[float]) -> Dict[str, float]:
    """median / min / max and the relative spread (max - min) / median of per-launch samples."""
    if not samples_us:
        raise ValueError("no samples")
    med = statistics.median(samples_us)
    lo, hi = min(samples_us), max(samples_us)
    return {
        "median_us": med,
        "min_us": lo,
        "max_us": hi,
        "spread": (hi - lo) / med if med > 0 else float("nan"),
    }


def _tensor_bytes(obj: Any) -> int:
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (list, tuple)):
        return sum(_tensor_bytes(o) for o in obj)
    return 0


def time_gpu(
    fn: Callable[..., Any],
    make_inputs: Callable[[int], Sequence[Any]],
    bytes_per_copy: int,
    *,
    replays: int = REPLAYS,
    warmup: int = WARMUP,
    l2_factor: float = L2_FACTOR,
    min_copies: int = MIN_COPIES,
    max_copies: int = MAX_COPIES,
    max_rotation_bytes: int = MAX_ROTATION_BYTES,
    use_graph: bool = True,
    device: Optional[torch.device] = None,
) -> Dict[str, Any]:
    """Cold-L2, CUDA-graph timing of `fn(*make_inputs(i))`.

    fn            the launch to time; called as fn(*inputs). Its result is kept
                  alive until timing ends (outputs live in the graph's pool).
    make_inputs   i -> the inputs of copy i. Copy i must not share storage with
                  copy j for the operands counted in bytes_per_copy (clone them).
    bytes_per_copy  the bytes one launch reads from its copy (weights, scales,
                  metadata, activations): decides how many copies are needed.

    Returns dict(median_us, min_us, max_us, spread, copies, replays, mode,
    l2_bytes, rotation_bytes). `mode` is "graph", or "eager: <why>" when the
    launches could not be captured (e.g. a host sync inside fn): then each
    replay is R eager launches between the same events, which includes the
    launch overhead; the caller reports the mode beside the number.
    """
    dev = torch.device("cuda", torch.cuda.current_device()) if device is None else torch.device(device)
    l2 = l2_bytes(dev)
    r = copies_needed(bytes_per_copy, l2, l2_factor, min_copies, max_copies)
    if r * bytes_per_copy > max_rotation_bytes:
        raise ValueError(
            f"rotation would hold {r} x {bytes_per_copy} B > max_rotation_bytes={max_rotation_bytes}"
        )
    inputs: List[Sequence[Any]] = [tuple(make_inputs(i)) for i in range(r)]

    # Warm up on a side stream, as graph capture requires: first calls
    # initialise cuBLAS handles and workspaces, load modules, pick algorithms.
    side = torch.cuda.Stream(device=dev)
    side.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(side):
        for _ in range(max(1, warmup)):
            for inp in inputs:
                fn(*inp)
    torch.cuda.current_stream(dev).wait_stream(side)
    torch.cuda.synchronize(dev)

    mode = "graph"
    graph = None
    outs: List[Any] = []
    if use_graph:
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                outs = [fn(*inp) for inp in inputs]
        except Exception as e:  # reported in `mode`, never hidden
            torch.cuda.synchronize(dev)
            graph, outs = None, []
            mode = "eager: capture failed: " + (str(e).strip().splitlines() or [type(e).__name__])[0][:120]
    else:
        mode = "eager: use_graph=False"

    if graph is not None:
        run = graph.replay
    else:

        def run() -> None:
            for inp in inputs:
                fn(*inp)

    for _ in range(WARM_REPLAYS):
        run()
    torch.cuda.synchronize(dev)
    t_warm = torch.cuda.Event(enable_timing=True)
    t_end = torch.cuda.Event(enable_timing=True)
    t_warm.record()
    run()
    t_end.record()
    torch.cuda.synchronize(dev)
    extra = int(WARM_MS / max(t_warm.elapsed_time(t_end), 1e-3))
    for _ in range(min(extra, 2000)):
        run()
    torch.cuda.synchronize(dev)

    starts = [torch.cuda.Event(enable_timing=True) for _ in range(replays)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(replays)]
    stream = torch.cuda.current_stream(dev)
    for s, e in zip(starts, ends):
        s.record(stream)
        run()
        e.record(stream)
    torch.cuda.synchronize(dev)
    samples = [s.elapsed_time(e) * 1e3 / r for s, e in zip(starts, ends)]  # ms -> us per launch

    out = summarize(samples)
    out.update(
        copies=r,
        replays=replays,
        mode=mode,
        l2_bytes=l2,
        rotation_bytes=r * bytes_per_copy,
        samples_us=samples,
    )
    del graph, outs
    return out


def time_cpu(
    fn: Callable[..., Any],
    inputs: Sequence[Any],
    *,
    min_run_time: float = 0.2,
    num_threads: Optional[int] = None,
) -> Dict[str, Any]:
    """torch.utils.benchmark timing of fn(*inputs) on the CPU (warm caches: no rotation)."""
    from torch.utils import benchmark

    timer = benchmark.Timer(
        stmt="fn(*inputs)",
        globals={"fn": fn, "inputs": tuple(inputs)},
        num_threads=num_threads or torch.get_num_threads(),
    )
    m = timer.blocked_autorange(min_run_time=min_run_time)
    samples = [t * 1e6 for t in m.times]
    out = summarize(samples)
    out["median_us"] = m.median * 1e6  # the Timer's own median over blocks
    out.update(
        copies=1,
        replays=len(samples),
        mode=f"cpu: blocked_autorange ({m.number_per_run} runs/block)",
        l2_bytes=0,
        rotation_bytes=_tensor_bytes(inputs),
        samples_us=samples,
    )
    return out


def time_fn(fn, make_inputs, bytes_per_copy, device: torch.device, **kw) -> Dict[str, Any]:
    """time_gpu on a CUDA device, time_cpu (copy 0 only) elsewhere."""
    if device.type == "cuda":
        return time_gpu(fn, make_inputs, bytes_per_copy, device=device, **kw)
    cpu_kw = {k: v for k, v in kw.items() if k in ("min_run_time", "num_threads")}
    return time_cpu(fn, make_inputs(0), **cpu_kw)


def measure_read_ceiling(
    device: Optional[torch.device] = None, nbytes: Optional[int] = None, replays: int = REPLAYS
) -> Dict[str, Any]:
    """Bytes-based roofline: a read-only reduction over `nbytes`, timed like every kernel.

    GPU: 2 GiB (two rotating copies, 4 GiB resident), torch.sum over fp32 and
    torch.amax over the same bytes as int32; the faster is the ceiling.
    CPU: 256 MiB, torch.sum with torch.utils.benchmark.
    Returns dict(tbps, median_us, method, nbytes, per_method={name: tbps}).
    """
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu") if device is None else torch.device(device)
    if nbytes is None:
        nbytes = READ_CEILING_BYTES if dev.type == "cuda" else 256 << 20
    n = nbytes // 4
    methods = {
        "sum_fp32": (torch.float32, lambda t: torch.sum(t)),
        "amax_int32": (torch.int32, lambda t: torch.amax(t)),
    }
    per_method: Dict[str, float] = {}
    best: Optional[Dict[str, Any]] = None
    if dev.type == "cuda":
        copies = [torch.ones(n, dtype=torch.float32, device=dev) for _ in range(MIN_COPIES)]
        for name, (dtype, op) in methods.items():
            views = [c.view(dtype) for c in copies]
            t = time_gpu(op, lambda i: (views[i],), n * 4, replays=replays, device=dev)
            tbps = n * 4 / (t["median_us"] * 1e-6) / 1e12
            per_method[name] = tbps
            if best is None or tbps > best["tbps"]:
                best = dict(tbps=tbps, median_us=t["median_us"], spread=t["spread"], method=name, mode=t["mode"])
        del copies
        torch.cuda.empty_cache()
    else:
        buf = torch.ones(n, dtype=torch.float32)
        t = time_cpu(torch.sum, (buf,), min_run_time=0.3)
        tbps = n * 4 / (t["median_us"] * 1e-6) / 1e12
        per_method["sum_fp32"] = tbps
        best = dict(tbps=tbps, median_us=t["median_us"], spread=t["spread"], method="sum_fp32", mode=t["mode"])
        del buf
    assert best is not None
    best.update(nbytes=n * 4, per_method=per_method, device=str(dev))
    return best


def set_env(pairs: Sequence[str]) -> None:
    """The micro benchmarks' --env: each VAR=VALUE (VALUE may be empty) into os.environ."""
    for kv in pairs:
        k, _, v = kv.partition("=")
        os.environ[k] = v


def micro_args(ap: "argparse.ArgumentParser") -> Optional["argparse.Namespace"]:
    """The micro benchmarks' start: adds --out (write_rows' CSV path), parses the command
    line and seeds torch's generator with 0; None (after saying so) without a CUDA device."""
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to time")
        return None
    torch.manual_seed(0)
    return args


def write_rows(path: str, rows: Sequence[Dict[str, Any]]) -> None:
    """The micro benchmarks' --out: rows (dicts with the first row's keys) as CSV at path;
    nothing when path is empty or there are no rows."""
    if not path or not rows:
        return
    with open(path, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
