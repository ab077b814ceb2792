"""SM clock and board power while one decode op runs back to back, per phase.

Each phase replays one CUDA graph (R launches over rotating weight copies, more than 3x the L2,
as benchmarks/timing.py does) for --seconds, timing every replay with CUDA events, while
`nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw -lms 50` samples the GPU in the
background. The summary gives, per phase, the median per-launch time and the median SM clock
and power over the samples taken inside the phase (the first 0.5 s of a phase skipped). It
answers whether two runs of the same kernel that differ only in data (M, which rows of x) ran
at different clocks.

Phases are "op:N:K:M[:path]" (op nvfp4, fp8, int8 or dense; path as the op's argument, default
auto), e.g.
PYTHONPATH=. python benchmarks/micro/clock_probe.py --phases nvfp4:28672:8192:1,nvfp4:28672:8192:4
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from datetime import datetime

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import timing  # noqa: E402

import torchquant  # noqa: E402,F401

ops = torch.ops.torchquant


def build(op, n, k, m, path, dtype):
    """(list of per-copy argument tuples, fn(args) -> y, bytes per copy)."""
    g = torch.Generator().manual_seed(0)
    w = torch.randn(n, k, generator=g) / k ** 0.5
    x = torch.randn(m, k, generator=g).to(dtype).cuda()
    if op == "nvfp4":
        wp, ws, gs = (t.cuda() for t in ops.quantize_nvfp4(w))
        base = (wp, ws, gs)
        fn = lambda a: ops.nvfp4_gemv(x, a[0], a[1], a[2], None, path)  # noqa: E731
    elif op == "fp8":
        wq, ws = (t.cuda() for t in ops.quantize_fp8_block(w, 128))
        base = (wq, ws)
        fn = lambda a: ops.fp8_block_gemv(x, a[0], a[1], 128, None, path)  # noqa: E731
    elif op == "int8":
        wq = torch.randint(-127, 128, (n, k), dtype=torch.int8, generator=g).cuda()
        xq = torch.randint(-127, 128, (m, k), dtype=torch.int8, generator=g).cuda()
        sw = torch.rand(n, generator=g).cuda() * 1e-3
        sx = torch.rand(m, generator=g).cuda() * 1e-2
        base = (wq,)
        fn = lambda a: ops.int8_matmul(xq, sx, None, a[0], sw, None, None, dtype, path)  # noqa: E731
    else:
        base = (w.to(dtype).cuda(),)
        fn = lambda a: F.linear(x, a[0])  # noqa: E731
    per = sum(t.numel() * t.element_size() for t in base)
    copies = timing.copies_needed(per, timing.l2_bytes())
    args = [base] + [tuple(t.clone() for t in base) for _ in range(copies - 1)]
    return args, fn, per


def run_phase(spec, seconds, dtype):
    parts = spec.split(":")
    op, n, k, m = parts[0], int(parts[1]), int(parts[2]), int(parts[3])
    path = parts[4] if len(parts) > 4 else "auto"
    args, fn, per = build(op, n, k, m, path, dtype)
    for a in args:
        fn(a)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for a in args:
            fn(a)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(graph):
        for a in args:
            fn(a)
    times = []
    t0 = time.time()
    while time.time() - t0 < seconds:
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        graph.replay()
        e1.record()
        e1.synchronize()
        if time.time() - t0 > 0.5:
            times.append(e0.elapsed_time(e1) * 1000.0 / len(args))
    t1 = time.time()
    del graph, args
    torch.cuda.empty_cache()
    return t0 + 0.5, t1, statistics.median(times), per


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--phases", required=True)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    ap.add_argument("--out", default="clock_probe")
    a = ap.parse_args()
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float16
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw", "--format=csv,noheader,nounits",
         "-lms", "50"], stdout=open(a.out + ".smi.csv", "w"), stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    rows = []
    try:
        for spec in a.phases.split(","):
            rows.append((spec,) + run_phase(spec, a.seconds, dtype))
            time.sleep(0.3)
    finally:
        smi.terminate()
        smi.wait()
    samples = []
    for line in open(a.out + ".smi.csv"):
        f = [c.strip() for c in line.split(",")]
        try:
            ts = datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            samples.append((ts, float(f[1]), float(f[2])))
        except (ValueError, IndexError):
            continue
    with open(a.out + ".txt", "w") as fh:
        for spec, t0, t1, us, per in rows:
            inside = [s for s in samples if t0 <= s[0] <= t1]
            clk = statistics.median([s[1] for s in inside]) if inside else float("nan")
            pw = statistics.median([s[2] for s in inside]) if inside else float("nan")
            line = (f"{spec:32s} {us:8.2f} us  {per / us / 1e6:6.3f} TB/s  SM clock {clk:6.0f} MHz  "
                    f"power {pw:6.1f} W  ({len(inside)} samples)")
            print(line)
            fh.write(line + "\n")


if __name__ == "__main__":
    main()
