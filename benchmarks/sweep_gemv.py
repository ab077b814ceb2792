"""Tuning sweep for the decode GEMV kernels' K split (dev tool, GPU only).

Times fp8_block_gemv's forced paths over TORCHQUANT_FP8_KSPLIT values with the
shared cold-L2 / CUDA-graph helper and prints the best per shape and M, so a
heuristic change is backed by a measurement. Usage: python benchmarks/sweep_gemv.py
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import timing  # noqa: E402

import torchquant  # noqa: E402,F401

SHAPES = [(4096, 4096), (14336, 4096), (28672, 8192), (128256, 4096)]
MS = [1, 2, 4, 8, 16]


def main():
    ceiling = timing.measure_read_ceiling()["tbps"]
    ops = torch.ops.torchquant
    print(f"read ceiling {ceiling}")
    print(f"{'N x K':>14} {'M':>3} {'path':>5} {'ks':>4} {'us':>9} {'% ceil':>7}")
    for N, K in SHAPES:
        w = torch.randn(N, K, device="cuda") * 0.02
        wq, ws = ops.quantize_fp8_block(w, 128)
        del w
        nbytes = wq.numel() + ws.numel() * 4
        for M in MS:
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            best = None
            for path, kss in (("fma", ["-"]), ("mma", ["", "1", "2", "4", "8"])):
                for ks in kss:
                    if ks in ("", "-"):
                        os.environ.pop("TORCHQUANT_FP8_KSPLIT", None)
                    else:
                        os.environ["TORCHQUANT_FP8_KSPLIT"] = ks
                    r = timing.time_gpu(lambda a, b, c, p=path: ops.fp8_block_gemv(a, b, c, 128, None, p),
                                        lambda i: (x, wq.clone(), ws.clone()), nbytes)
                    us = r["median_us"]
                    pct = nbytes / (us * 1e-6) / (ceiling * 1e12) * 100 if ceiling else float("nan")
                    label = ks if ks else "auto"
                    print(f"{N:>6}x{K:<7} {M:>3} {path:>5} {label:>4} {us:9.2f} {pct:6.1f}%", flush=True)
                    if best is None or us < best[0]:
                        best = (us, path, label)
            print(f"  best: {best[1]} ks={best[2]} {best[0]:.2f} us", flush=True)
    os.environ.pop("TORCHQUANT_FP8_KSPLIT", None)


if __name__ == "__main__":
    main()
