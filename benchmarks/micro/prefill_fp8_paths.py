"""Prefill (large-M) candidates for an FP8-E4M3 block-scaled weight (torchquant "fp8_block").

W[n, k] = float(w_q[n, k]) * scale[n, k // 128]; w_q [N, K] e4m3, scale fp32 [N, K/128];
x bf16 [M, K]; y = x @ W^T in bf16 [M, N]. Candidates (a failure becomes a row holding the error):
  bf16_linear          F.linear(x, W_bf16): the baseline of the t/bf16 column
  deq_only             torch.ops.torchquant.dequantize_fp8_block -> bf16 [N, K] (no GEMM)
  deq_cublas           deq_only, then F.linear
  w8a8_quant_plain     per-1x128 e4m3 quantization of x in plain torch ops (no GEMM)
  w8a8_quant_lean      the same in fewer launches (inf-norm reduction, division written into e4m3)
  w8a8_gemm[a=,b=]     torch._scaled_mm, BlockWise1x128 x BlockWise1x128, on pre-quantized x, one
                       row per scale-layout variant (accepted? right?)
  w8a8_total           quantization + _scaled_mm with the first layout that gave the right answer
  chunk<C>_<mode>      dequantize C weight rows at a time into one bf16 [C, K] buffer, GEMM per chunk:
                       mmout  torch.mm(x, buf.t(), out=y[:, n0:n1]) (a strided column slice of y)
                       copy   y[:, n0:n1].copy_(x @ buf.t())     (one extra [M, C] write + read)
                       colmaj torch.mm(buf, x.t(), out=yT[n0:n1]); returns yT.t() (y column-major)
Timing: every operand a launch reads (x, w_q, scales; W_bf16 for the baseline) has R copies,
R * bytes > 3x L2 (R >= 2); one CUDA graph launches the candidate once per copy; after warm-up,
median over --replays replays of replay time / R. Capture failure -> eager, same rotation (mode).
Correctness: float64 reference over the first 256 output rows (all rows of the small shape).
Run:  PYTHONPATH=. python benchmarks/micro/prefill_fp8_paths.py [--quick] [--out rows.csv]
"""
from __future__ import annotations

import argparse
import csv
import ctypes
import math
import os
import sys

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import timing  # noqa: E402  (benchmarks/timing.py: the cold-L2, CUDA-graph timer every benchmark uses)
DEV = "cuda"  # a module global only so that the untimed accuracy path can be exercised on CPU
BS = 128
FP8_MAX = 448.0
SHAPES = [(2048, 28672, 8192), (2048, 4096, 4096), (2048, 6144, 4096), (2048, 14336, 4096),
          (2048, 4096, 14336), (512, 28672, 8192), (8192, 28672, 8192)]
SMALL = (64, 512, 1024)
CHECK_ROWS = 256
WRONG = 2e-2  # relF above this (vs the candidate's own operands) marks a row WRONG
COLS = ["M", "N", "K", "candidate", "median_us", "tflops", "t_over_bf16", "mode", "copies",
        "maxrel", "relF", "relF_vs_qact", "note"]
# (a, b) scale layouts for _scaled_mm: a "outer" = [M, K/128] strides (1, M), a "contig" = strides
# (K/128, 1); b "contig" = [K/128, N] strides (N, 1), b "tview" = scale.t() view, strides (1, K/128).
LAYOUTS = [("outer", "contig"), ("outer", "tview"), ("contig", "contig"), ("contig", "tview")]


def short(e: BaseException, n: int = 520) -> str:
    s = f"{type(e).__name__}: " + " ".join(str(e).split())
    return s if len(s) <= n else s[: n // 2] + " ... " + s[-n // 2:]


def versions() -> str:
    cap = torch.cuda.get_device_capability()
    out = [f"device {torch.cuda.get_device_name()} (sm_{cap[0]}{cap[1]}), L2 {l2_bytes() >> 20} MiB",
           f"torch {torch.__version__}, torch CUDA {torch.version.cuda}"]
    for so in ("libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"):
        try:
            lib = ctypes.CDLL(so)
            lib.cublasLtGetVersion.restype = ctypes.c_size_t
            lib.cublasLtGetCudartVersion.restype = ctypes.c_size_t
            out.append(f"cublasLt {lib.cublasLtGetVersion()} ({so}; its cudart "
                       f"{lib.cublasLtGetCudartVersion()})")
            break
        except (OSError, AttributeError):
            continue
    from importlib import metadata
    for pkg in ("nvidia-cublas", "nvidia-cublas-cu13", "nvidia-cublas-cu12"):
        try:
            out.append(f"{pkg} {metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            pass
    return "\n".join(out)


def l2_bytes() -> int:
    return timing.l2_bytes()


def n_copies(nbytes: int) -> int:
    """Copies of `nbytes` each that exceed 3x L2: the benchmarks' rule (benchmarks/timing.py)."""
    return timing.copies_needed(nbytes, l2_bytes())


def time_rotated(fn, copies, replays: int):
    """(median us per launch, mode) by the benchmarks' cold-L2 graph timing (benchmarks/timing.py),
    launch i reading copies[i]; raises if the copies cannot cover 3x L2."""
    nbytes = sum(t.numel() * t.element_size() for t in copies[0] if isinstance(t, torch.Tensor))
    res = timing.time_gpu(fn, lambda i: copies[i], nbytes, replays=replays,
                          min_copies=len(copies), max_copies=len(copies))
    return res["median_us"], res["mode"]


def gpu_ops(fn, args):
    """GPU activities (kernels, memcpy, memset) of one eager call, from the profiler: (count, names)."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn(*args)
        torch.cuda.synchronize()
    names = [e.name for e in p.events() if e.device_type == DeviceType.CUDA]
    return len(names), [n.split("<")[0].split("(")[0][:48] for n in names]


def deq64(wq, ws):
    return wq.double() * ws.double().repeat_interleave(BS, dim=1)[:, : wq.shape[1]]


def errs(out, ref):
    d = out.double() - ref
    return (d.abs().max() / ref.abs().max()).item(), (d.norm() / ref.norm()).item()


def quant_plain(x):
    """x bf16 [M, K] -> (q e4m3 [M, K], sa fp32 [M, K/128] with strides (1, M), outer-dim-major).
    Launches: abs, amax, float, div, clamp_min on the [K/128, M] scales; div, cast on [M, K]."""
    M, K = x.shape
    kb = K // BS
    s = x.view(M, kb, BS).transpose(0, 1).abs().amax(-1).float().div_(FP8_MAX).clamp_min_(1e-12)
    sa = s.contiguous().t()  # .contiguous() is a no-op when the reduction already wrote [kb, M]
    q = (x.view(M, kb, BS) / sa.unsqueeze(-1)).to(torch.float8_e4m3fn).view(M, K)
    return q, sa  # |x| / (amax/448) <= 448 up to fp32 rounding, which e4m3 rounds back to 448


def quant_lean(x):
    """Same values as quant_plain: max|x| in one reduction straight to fp32, division stored as e4m3."""
    M, K = x.shape
    kb = K // BS
    s = torch.linalg.vector_norm(x.view(M, kb, BS).transpose(0, 1), float("inf"), dim=-1,
                                 dtype=torch.float32)
    sa = s.div_(FP8_MAX).clamp_min_(1e-12).contiguous().t()
    q = torch.empty(M, K, dtype=torch.float8_e4m3fn, device=x.device)
    torch.div(x.view(M, kb, BS), sa.unsqueeze(-1), out=q.view(M, kb, BS))
    return q, sa


def deq(wq, ws):
    return torch.ops.torchquant.dequantize_fp8_block(wq, ws, BS, torch.bfloat16)


def scaled_mm(q, wq, sa, sb, la="outer", lb="contig", ws=None):
    sa = sa if la == "outer" else sa.contiguous()
    sb = sb if lb == "contig" else ws.t()
    return torch._scaled_mm(q, wq.t(), sa, sb, out_dtype=torch.bfloat16)


def make_chunked(C: int, mode: str):
    def run(x, wq, ws, sb):
        M, N = x.shape[0], wq.shape[0]
        shape = (N, M) if mode == "colmaj" else (M, N)
        y = torch.empty(shape, dtype=x.dtype, device=x.device)
        for n0 in range(0, N, C):
            n1 = min(N, n0 + C)
            buf = deq(wq[n0:n1], ws[n0:n1])
            if mode == "mmout":
                torch.mm(x, buf.t(), out=y[:, n0:n1])
            elif mode == "copy":
                y[:, n0:n1].copy_(torch.mm(x, buf.t()))
            else:
                torch.mm(buf, x.t(), out=y[n0:n1])
            del buf  # freed before the next chunk's dequant: the allocator hands back the same block
        return y.t() if mode == "colmaj" else y
    return run


class Shape:
    def __init__(self, M, N, K, timed, args, writer):
        self.M, self.N, self.K, self.timed, self.args, self.writer = M, N, K, timed, args, writer
        self.t_bf16 = float("nan")

    def evaluate(self, name, fn, copies, kind):
        """kind: ref (vs exact ref), q (also vs the quantized-activation ref), none, quant."""
        M, N, K, r = self.M, self.N, self.K, self.r
        row = dict(M=M, N=N, K=K, candidate=name, copies=len(copies), note="", mode="")
        try:
            out = fn(*copies[0])
            torch.cuda.synchronize()
            if kind in ("ref", "q"):
                row["maxrel"], row["relF"] = errs(out[:r], self.ref)
                own = row["relF"]
                if kind == "q":
                    row["relF_vs_qact"] = own = errs(out[:r], self.ref_q)[1]
                if not own <= WRONG:
                    row["note"] = "WRONG; "
            elif kind == "quant":
                same = torch.equal(out[0].view(torch.uint8), self.q0.view(torch.uint8)) and \
                    torch.equal(out[1], self.sa0)
                row["note"] = f"bit-equal to quant_plain: {same}; "
            del out
            if self.timed:
                us, row["mode"] = time_rotated(fn, copies, self.args.replays)
                row["median_us"] = us
                if kind in ("ref", "q"):
                    row["tflops"] = 2.0 * M * N * K / us / 1e6
                if name == "bf16_linear":
                    self.t_bf16 = us
                row["t_over_bf16"] = us / self.t_bf16
            try:
                count, names = gpu_ops(fn, copies[0])
                row["note"] += f"{count} GPU ops" + (f" [{', '.join(names)}]" if kind == "quant" else "")
            except Exception as e:  # noqa: BLE001
                row["note"] += f"GPU op count unavailable ({short(e, 120)})"
        except Exception as e:  # noqa: BLE001
            row["note"] += f"FAILED: {short(e)}"
        emit(row, self.writer)
        return row

    def run(self):
        M, N, K = self.M, self.N, self.K
        assert K % BS == 0, "the activation quantization here assumes K % 128 == 0"
        gen = torch.Generator(device=DEV).manual_seed(1000003 * M + 1009 * N + K)
        w = torch.randn(N, K, device=DEV, generator=gen) * 0.02
        wq, ws = torch.ops.torchquant.quantize_fp8_block(w, BS)
        del w
        x = torch.randn(M, K, device=DEV, generator=gen).to(torch.bfloat16)
        self.r = r = min(CHECK_ROWS, M)
        wd = deq64(wq, ws)
        self.ref = x[:r].double() @ wd.t()
        self.q0, self.sa0 = quant_plain(x)
        self.ref_q = deq64(self.q0[:r], self.sa0[:r]) @ wd.t()
        del wd
        by8 = M * K + N * K + 3 * ws.numel() * 4  # the smallest fp8 copy: (q, sa, w_q, scale, sb)
        r8 = n_copies(by8) if self.timed else 1
        # sb = the weight scales as [K/128, N] contiguous: a one-time offline re-layout, not timed
        c8 = [(x, wq, ws, ws.t().contiguous())] + \
             [(x.clone(), wq.clone(), ws.clone(), ws.t().contiguous()) for _ in range(r8 - 1)]
        rb = min(r8, n_copies(M * K * 2 + N * K * 2)) if self.timed else 1
        cb = [(c[0], deq(c[1], c[2])) for c in c8[:rb]]
        cq = [quant_plain(c[0]) + c[1:] for c in c8]  # (q, sa, wq, ws, sb)
        print(f"# {M}x{N}x{K}: fp8 copies R={r8} (>= {by8 / 2**20:.1f} MiB each), bf16 copies R={rb}; "
              f"check rows {r}", flush=True)
        self.evaluate("bf16_linear", lambda x, wb: F.linear(x, wb), cb, "ref")
        self.evaluate("deq_only", lambda x, wq, ws, sb: deq(wq, ws), c8, "none")
        self.evaluate("deq_cublas", lambda x, wq, ws, sb: F.linear(x, deq(wq, ws)), c8, "ref")
        quants = {"plain": quant_plain, "lean": quant_lean}
        ok_q = []
        for qn, qf in quants.items():
            row = self.evaluate(f"w8a8_quant_{qn}", lambda x, wq, ws, sb, qf=qf: qf(x), c8, "quant")
            if "bit-equal to quant_plain: True" in row["note"] and "FAILED" not in row["note"]:
                ok_q.append(qn)
        good = []
        for la, lb in LAYOUTS:
            fn = (lambda q, sa, wq, ws, sb, la=la, lb=lb: scaled_mm(q, wq, sa, sb, la, lb, ws))
            row = self.evaluate(f"w8a8_gemm[a={la},b={lb}]", fn, cq, "q")
            if "relF_vs_qact" in row and row["relF_vs_qact"] <= WRONG:
                good.append((la, lb))
        if good:
            la, lb = good[0]
            qf = quants["lean" if "lean" in ok_q else "plain"]

            def fn(x, wq, ws, sb):
                q, sa = qf(x)
                return scaled_mm(q, wq, sa, sb, la, lb, ws)
            self.evaluate(f"w8a8_total[{qf.__name__},a={la},b={lb}]", fn, c8, "q")
        else:
            print("# w8a8_total skipped: no _scaled_mm layout variant was accepted and right")
        # torchquant's own pieces (what QuantLinear(prefill="w8a8") runs): the
        # activation quantizer alone, the per-call scale_b re-layout, and the total.
        tq_q = lambda x, wq, ws, sb: torch.ops.torchquant.quantize_fp8_act(x, BS)  # noqa: E731
        self.evaluate("tq_quantize_fp8_act", tq_q, c8, "quant")
        self.evaluate("tq_scale_b_relayout", lambda x, wq, ws, sb: ws.t().contiguous(), c8, "none")

        def tq_total(x, wq, ws, sb):
            q, sa = torch.ops.torchquant.quantize_fp8_act(x, BS)
            return torch._scaled_mm(q, wq.t(), sa, ws.t().contiguous(), out_dtype=torch.bfloat16)
        self.evaluate("tq_w8a8_total", tq_total, c8, "q")
        for C in self.args.chunks:
            if C > N and C != self.args.chunks[0]:
                continue
            for mode in ("mmout", "copy", "colmaj"):
                name = f"chunk{C}_{mode}(buf {min(C, N) * K * 2 / 2**20:.0f}MiB)"
                self.evaluate(name, make_chunked(C, mode), c8, "ref")


def fmt(v, spec):
    return format(v, spec) if isinstance(v, float) and not math.isnan(v) else "-"


def emit(row, writer):
    print(f"{row['M']:>5} {row['N']:>6} {row['K']:>6}  {row['candidate']:<40} "
          f"{fmt(row.get('median_us'), '10.1f'):>10} {fmt(row.get('tflops'), '7.1f'):>7} "
          f"{fmt(row.get('t_over_bf16'), '7.3f'):>7}  maxrel {fmt(row.get('maxrel'), '.2e'):>8} "
          f"relF {fmt(row.get('relF'), '.2e'):>8} relF_qact {fmt(row.get('relF_vs_qact'), '.2e'):>8}  "
          f"{row.get('mode', '')}  {row['note']}", flush=True)
    if writer is not None:
        writer[1].writerow({k: row.get(k, "") for k in COLS})
        writer[0].flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="only M=2048, N=28672, K=8192")
    ap.add_argument("--out", default=None, help="CSV path for the rows (default: none)")
    ap.add_argument("--replays", type=int, default=7)
    ap.add_argument("--chunks", default="1024,2048,4096", help="chunk sizes C (weight rows)")
    args = ap.parse_args()
    args.chunks = [int(c) for c in args.chunks.split(",") if c.strip()]
    if not torch.cuda.is_available():
        print("prefill_fp8_paths: CUDA is not available; this GPU experiment has nothing to measure "
              "here (run it on an sm_90 GPU).")
        return 0
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    import torchquant  # noqa: F401  (registers torch.ops.torchquant.*)

    print(versions())
    print(f"timing: cold-L2 rotation (>3x L2), CUDA graph, median of {args.replays} replays / R; "
          "t/bf16 = this row's time / bf16_linear's time in the same shape (<1 is faster)")
    print(f"{'M':>5} {'N':>6} {'K':>6}  {'candidate':<40} {'median_us':>10} {'TFLOP/s':>7} "
          f"{'t/bf16':>7}  errors over the checked rows  mode  note")
    fh = open(args.out, "w", newline="") if args.out else None
    writer = None
    if fh is not None:
        writer = (fh, csv.DictWriter(fh, fieldnames=COLS))
        writer[1].writeheader()
    try:
        print("# accuracy only (untimed), small shape, all rows")
        Shape(*SMALL, timed=False, args=args, writer=writer).run()
        for M, N, K in (SHAPES[:1] if args.quick else SHAPES):
            Shape(M, N, K, timed=True, args=args, writer=writer).run()
            torch.cuda.empty_cache()
    finally:
        if fh is not None:
            fh.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
