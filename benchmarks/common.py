"""What the per-op benchmark scripts share: loading torchquant, stamping
results, the float64 correctness checks, the measurement loop and the
CSV / Markdown writers.

A benchmark script describes, for each (shape, M), a list of `Impl`s (one
torchquant path or one peer): how to build its inputs for copy i, how many
bytes one launch moves, how to check its output. `run_bench` runs each one
once, checks the result against float64, times it with timing.time_fn and
turns the numbers into rows: time, TB/s, % of the read ceiling measured in
the same process, TFLOP/s, speedup over every peer, check status.

Import-safe: importing this module touches no GPU and needs no torchquant.
"""

from __future__ import annotations

import argparse
import copy
import csv
import datetime as _dt
import functools
import json
import math
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import shapes as shapes_mod  # noqa: E402
import timing  # noqa: E402

OUT_DTYPE = torch.bfloat16  # activations and outputs of every benchmark
PEER_REL_TOL = 1e-2  # sanity gate for peers (cuBLAS, cuSPARSELt): relative Frobenius error

# --------------------------------------------------------------- torchquant --
_TQ: Dict[str, Any] = {}


def pdl_note(device) -> str:
    """How the decode kernels were launched (csrc/common/pdl.h): TORCHQUANT_PDL's value, or
    each kernel's default when it is unset."""
    v = os.environ.get("TORCHQUANT_PDL")
    if torch.cuda.get_device_capability(device)[0] < 9:
        return "launched without PDL (compute capability < 9.0)"
    return f"launched with TORCHQUANT_PDL={v}" if v else "launched with the PDL defaults of csrc/common/pdl.h"


def load_torchquant() -> Tuple[Optional[Any], str]:
    """(torchquant module or None, why not). Prefers an installed torchquant;
    falls back to the source tree (an in-place build) only if that fails."""
    if "mod" in _TQ:
        return _TQ["mod"], _TQ["err"]
    mod, err = None, ""
    try:
        import torchquant as mod  # type: ignore
    except Exception as e:  # ImportError, or an OSError from a broken .so
        err = f"{type(e).__name__}: {e}"
        if REPO_ROOT not in sys.path:
            sys.path.append(REPO_ROOT)
            for k in [k for k in sys.modules if k == "torchquant" or k.startswith("torchquant.")]:
                del sys.modules[k]
            try:
                import torchquant as mod  # type: ignore  # noqa: F811

                err = ""
            except Exception as e2:
                mod, err = None, f"{type(e2).__name__}: {e2}"
    _TQ["mod"], _TQ["err"] = mod, err
    return mod, err


def tq_reference() -> Optional[Any]:
    """torchquant.reference, or None (then the local float64 fallbacks below are used)."""
    if "ref" not in _TQ:
        ref = None
        if load_torchquant()[0] is not None:
            try:
                from torchquant import reference as ref  # type: ignore
            except Exception:
                ref = None
        _TQ["ref"] = ref
    return _TQ["ref"]


def has_op(name: str) -> bool:
    """Whether torch.ops.torchquant registers `name` (any backend)."""
    try:
        return hasattr(torch.ops.torchquant, name)
    except Exception:
        return False


def has_kernel(name: str, device: torch.device) -> bool:
    """Whether torchquant::name has a kernel for device's dispatch key."""
    key = "CUDA" if device.type == "cuda" else "CPU"
    try:
        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(f"torchquant::{name}", key))
    except Exception:
        return has_op(name)


def quantize_weight(op: str, w: torch.Tensor, *args) -> Tuple[Tuple[torch.Tensor, ...], str]:
    """torch.ops.torchquant.<op>(w, *args) on w's device. Where that backend has
    no kernel for it: torchquant.formats.<op> (pure torch, bit-identical by
    contract) on the device, else the CPU op and a copy back. The returned
    note (empty when the op ran natively) says which. Raises when none exists."""
    fn = getattr(torch.ops.torchquant, op)
    if has_kernel(op, w.device):
        return tuple(fn(w, *args)), ""
    tq, _ = load_torchquant()
    pure = getattr(getattr(tq, "formats", None), op, None)
    if pure is not None:
        return tuple(pure(w, *args)), f"torchquant::{op} has no {w.device.type} kernel: used torchquant.formats.{op}"
    if w.device.type != "cpu" and has_kernel(op, torch.device("cpu")):
        out = fn(w.cpu(), *args)
        return tuple(t.to(w.device) for t in out), f"torchquant::{op} has no {w.device.type} kernel: ran on the CPU"
    raise RuntimeError(f"torchquant::{op} has no kernel for {w.device.type} and torchquant.formats has no {op}")


def try_quantize(ctx: "Ctx", op: str, w: torch.Tensor, *args) -> Tuple[Optional[Tuple[torch.Tensor, ...]], str]:
    """quantize_weight, or (None, why) when torchquant cannot quantize here (its rows become n/a)."""
    if ctx.tq is None:
        return None, "torchquant not importable"
    try:
        out, note = quantize_weight(op, w, *args)
    except Exception as e:
        reason = f"{op}: {first_line(e)}"
        ctx.note_once(f"torchquant rows n/a: {reason}")
        return None, reason
    ctx.note_once(note)
    return out, ""


# ---------------------------------------------------------------- stamping --
def git_commit() -> str:
    """$TORCHQUANT_COMMIT when set (the GPU job passes the checkout's commit: the device
    tool's copy of the tree carries a stale .git, whose HEAD the 2026-12-02c tables were first
    stamped with), else `git rev-parse --short HEAD` (+"-dirty" with uncommitted tracked
    changes), else "unknown"."""
    env = os.environ.get("TORCHQUANT_COMMIT", "").strip()
    if env:
        return env
    try:
        r = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10
        )
        if r.returncode == 0 and r.stdout.strip():
            sha = r.stdout.strip()
            d = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=REPO_ROOT, capture_output=True, timeout=30)
            return sha + ("-dirty" if d.returncode == 1 else "")
    except Exception:
        pass
    return os.environ.get("TORCHQUANT_COMMIT", "unknown")


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    name = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"CPU {name}".strip()


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unknown"


def make_stamp(device: torch.device) -> Dict[str, str]:
    tq, err = load_torchquant()
    st = {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "device": device_name(device),
        "torch": torch.__version__,
        "cuda": str(torch.version.cuda),
        "commit": git_commit(),
        "torchquant": getattr(tq, "__version__", "?") if tq is not None else f"NOT IMPORTABLE ({err[:160]})",
        "host": platform.node(),
    }
    if device.type == "cuda":
        p = torch.cuda.get_device_properties(device)
        st["sm"] = f"{p.major}.{p.minor}, {p.multi_processor_count} SMs, L2 {p.L2_cache_size / 2**20:.0f} MiB"
    return st


def stamp_text(stamp: Dict[str, str], sep: str = " | ") -> str:
    keys = ["date", "device", "sm", "torch", "cuda", "commit", "torchquant"]
    return sep.join(f"{k}: {stamp[k]}" for k in keys if k in stamp)


# ---------------------------------------------------------- float64 checks --
@dataclass
class Check:
    status: str  # "ok" | "FAIL"
    worst: float  # max error / gate (<= 1 passes); inf for non-finite output
    gate: str  # what the gate was

    def text(self) -> str:
        return f"{self.status} ({self.worst:.3g} of {self.gate})"


class Lazy:
    """A value computed on first use and dropped with `clear()` (float64 refs are big)."""

    def __init__(self, fn: Callable[[], Any]):
        self.fn, self.val, self.done = fn, None, False

    def __call__(self) -> Any:
        if not self.done:
            self.val, self.done = self.fn(), True
        return self.val

    def clear(self) -> None:
        self.val, self.done = None, False


_UNIT = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
_SUB = {torch.float32: 2.0**-150, torch.float16: 2.0**-25, torch.bfloat16: 2.0**-134}


def linear64(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x.to(torch.float64) @ w.to(torch.float64).T


def deq_int8(w_q: torch.Tensor, w_scale: torch.Tensor) -> torch.Tensor:
    s = w_scale.to(torch.float64)
    return w_q.to(torch.float64) * (s.reshape(-1, 1) if s.numel() > 1 else s)


def deq_fp8_block(w_q: torch.Tensor, scale: torch.Tensor, block_size: int) -> torch.Tensor:
    ref = tq_reference()
    if ref is not None and hasattr(ref, "dequantize_fp8_block_ref"):
        return ref.dequantize_fp8_block_ref(w_q, scale, block_size)
    K = w_q.shape[1]
    s = scale.to(torch.float64).repeat_interleave(block_size, dim=1)[:, :K]
    return w_q.to(torch.float64) * s


_E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def deq_nvfp4(w_packed: torch.Tensor, scale: torch.Tensor, global_scale: torch.Tensor) -> torch.Tensor:
    ref = tq_reference()
    if ref is not None and hasattr(ref, "dequantize_nvfp4_ref"):
        return ref.dequantize_nvfp4_ref(w_packed, scale, global_scale)
    lut = torch.tensor(_E2M1 + [-v for v in _E2M1], dtype=torch.float64, device=w_packed.device)
    lo = (w_packed & 0xF).long()
    hi = (w_packed >> 4).long()
    codes = torch.stack([lo, hi], dim=-1).reshape(w_packed.shape[0], -1)  # element 2j low nibble
    s = scale.to(torch.float64).repeat_interleave(16, dim=1)
    return lut[codes] * s * global_scale.to(torch.float64).reshape(())


def fp32_accum_bound(x: torch.Tensor, w_deq: torch.Tensor, ref64: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
    """Bound on |kernel - float64| for fp32 accumulation in any order (u = 2^-23,
    covers truncating adders) over K + 3 terms, then one rounding to out_dtype.
    Uses torchquant.reference.fp32_accum_bound where it exists."""
    ref = tq_reference()
    if ref is not None and hasattr(ref, "fp32_accum_bound"):
        return ref.fp32_accum_bound(x, w_deq, None, out_dtype)
    n = x.shape[-1] + 3
    u = 2.0**-23
    gamma = n * u / (1.0 - n * u)
    s = x.to(torch.float64).abs() @ w_deq.to(torch.float64).abs().T
    uo = _UNIT[out_dtype]
    return gamma * s * (1 + uo) + uo * ref64.abs() + _SUB[out_dtype]


def int8_ref_and_bound(a_q, a_scale, w_q, w_scale, out_dtype) -> Tuple[torch.Tensor, torch.Tensor]:
    """float64 s_a s_w acc (exact integer acc) and the fp32-epilogue + output rounding bound."""
    ref = tq_reference()
    if ref is not None and hasattr(ref, "int8_matmul_ref") and hasattr(ref, "int8_epilogue_bound"):
        y = ref.int8_matmul_ref(a_q, a_scale, None, w_q, w_scale)
        return y, ref.int8_epilogue_bound(y, None, out_dtype)
    acc = a_q.to(torch.float64) @ w_q.to(torch.float64).T  # exact: |acc| < 2^53
    sa = a_scale.to(torch.float64)
    sa = sa.reshape(-1, 1) if sa.numel() > 1 else sa
    sw = w_scale.to(torch.float64)
    sw = sw.reshape(1, -1) if sw.numel() > 1 else sw
    y = acc * sa * sw
    u32 = 2.0**-24
    uo = _UNIT[out_dtype]
    core = 4.0 * u32 / (1.0 - 4.0 * u32) * y.abs()
    return y, core * (1 + uo) + uo * y.abs() + _SUB[out_dtype]


def check_bound(out: torch.Tensor, ref64: torch.Tensor, bound: torch.Tensor, gate: str) -> Check:
    g = out.to(torch.float64)
    if tuple(g.shape) != tuple(ref64.shape):
        return Check("FAIL", math.inf, f"{gate}: shape {tuple(g.shape)} != {tuple(ref64.shape)}")
    if not bool(torch.isfinite(g).all()):
        return Check("FAIL", math.inf, gate + " (non-finite output)")
    worst = float(((g - ref64).abs() / bound).max())
    return Check("ok" if worst <= 1.0 else "FAIL", worst, gate)


def worst_of(checks: Sequence[Check]) -> Check:
    """Several checks of one row as one: FAIL if any failed, with the largest worst fraction."""
    bad = [c for c in checks if c.status != "ok"]
    w = max(checks, key=lambda c: c.worst)
    return Check("FAIL" if bad else "ok", w.worst, w.gate)


def check_rel(out: torch.Tensor, ref64: torch.Tensor, tol: float = PEER_REL_TOL, gate: str = "") -> Check:
    """Loose sanity gate: relative Frobenius error <= tol."""
    gate = gate or f"rel-fro<={tol:g}"
    g = out.to(torch.float64)
    if tuple(g.shape) != tuple(ref64.shape):
        return Check("FAIL", math.inf, f"{gate}: shape {tuple(g.shape)} != {tuple(ref64.shape)}")
    if not bool(torch.isfinite(g).all()):
        return Check("FAIL", math.inf, gate + " (non-finite output)")
    rel = float((g - ref64).norm() / ref64.norm().clamp_min(1e-300))
    return Check("ok" if rel <= tol else "FAIL", rel / tol, gate)


CHUNK_ELEMS = 1 << 26  # weight elements per float64 reference chunk (512 MiB): bounds the check's memory


def row_chunks(N: int, K: int, elems: int = CHUNK_ELEMS) -> List[Tuple[int, int]]:
    step = max(1, elems // max(1, K))
    return [(n0, min(N, n0 + step)) for n0 in range(0, N, step)]


def linear64_rows(x: torch.Tensor, rows: Callable[[int, int], torch.Tensor], N: int) -> torch.Tensor:
    """float64 x @ W^T with W produced a block of output rows at a time (rows(n0, n1) -> W[n0:n1])."""
    return torch.cat([linear64(x, rows(n0, n1)) for n0, n1 in row_chunks(N, x.shape[1])], dim=1)


def bound_check(
    N: int, K: int, chunk: Callable[[int, int], Tuple[torch.Tensor, torch.Tensor]], gate: str
) -> Tuple[Callable[[Any], Check], "Lazy"]:
    """A strict check whose float64 reference and bound are built lazily, output
    columns in row chunks of the weight (chunk(n0, n1) -> (ref, bound) of
    columns n0..n1). Returns (check, lazy (ref, bound) to clear after the case)."""

    def build():
        parts = [chunk(n0, n1) for n0, n1 in row_chunks(N, K)]
        return torch.cat([y for y, _ in parts], 1), torch.cat([b for _, b in parts], 1)

    lz = Lazy(build)

    def chk(out: Any) -> Check:
        y, b = lz()
        return check_bound(out, y, b, gate)

    return chk, lz


def float_check(
    x: torch.Tensor, deq_rows: Callable[[int, int], torch.Tensor], N: int, out_dtype: torch.dtype
) -> Tuple[Callable[[Any], Check], "Lazy"]:
    """Strict check of a kernel that decodes weights exactly and accumulates in fp32:
    against float64 x @ W_deq^T, gated by fp32_accum_bound, built over row chunks
    of the dequantized weight (deq_rows(n0, n1) -> float64 W[n0:n1]).
    Returns (check, lazy (ref, bound) to clear after the case)."""

    def chunk(n0: int, n1: int) -> Tuple[torch.Tensor, torch.Tensor]:
        wd = deq_rows(n0, n1)
        y = linear64(x, wd)
        return y, fp32_accum_bound(x, wd, y, out_dtype)

    return bound_check(N, x.shape[1], chunk, "fp32-accum bound")


def int8_check(
    a_q: torch.Tensor, a_scale: torch.Tensor, w_q: torch.Tensor, w_scale: torch.Tensor, out_dtype: torch.dtype
) -> Tuple[Callable[[Any], Check], "Lazy"]:
    """Strict check of an int8 W8A8 result: exact integer product scaled in float64,
    gated by the fp32-epilogue + output-rounding bound (row chunks of w_q)."""
    N = w_q.shape[0]

    def chunk(n0: int, n1: int) -> Tuple[torch.Tensor, torch.Tensor]:
        ws = w_scale[n0:n1] if w_scale.numel() > 1 else w_scale
        return int8_ref_and_bound(a_q, a_scale, w_q[n0:n1], ws, out_dtype)

    return bound_check(N, w_q.shape[1], chunk, "int8 epilogue bound")


def rel_check(ref: Callable[[], torch.Tensor], rows: Optional[int] = None, tol: float = PEER_REL_TOL) -> Tuple[Callable[[Any], Check], "Lazy"]:
    """Sanity check of a peer against a float64 reference (first `rows` output rows if given)."""
    lz = Lazy(ref)

    def chk(out: Any) -> Check:
        o = out if rows is None else out[:rows]
        return check_rel(o, lz(), tol)

    return chk, lz


# ------------------------------------------------------------- measurement --
@dataclass
class Impl:
    """One thing to time at one (shape, M).

    name         row label, e.g. "tq auto", "tq mma", "bf16 F.linear"
    kind         "torchquant" or "peer"
    fn           fn(*inputs) -> output (or a list of outputs)
    make_inputs  i -> inputs of copy i (copy 0 is also the one checked)
    nbytes       bytes one launch moves: weights incl. scales/metadata + activation + output
    flops        2 M N K (summed over projections for the end-to-end rows)
    check        output -> Check, or None for no check
    peer_key     short column key for "speedup vs <peer_key>" (peers only)
    series       name of the line in the cross-format plots, or None
    skip         a reason: the row is reported as n/a and nothing runs
    note         printed beside the row
    min_copies   lower bound on rotation copies (bench_e2e uses it for a layer stack)
    """

    name: str
    kind: str
    fn: Callable[..., Any]
    make_inputs: Callable[[int], Sequence[Any]]
    nbytes: int
    flops: float
    check: Optional[Callable[[Any], Check]] = None
    peer_key: Optional[str] = None
    series: Optional[str] = None
    skip: Optional[str] = None
    note: str = ""
    min_copies: int = timing.MIN_COPIES


@dataclass
class Case:
    shape: shapes_mod.Shape
    M: int
    impls: List[Impl]
    cleanup: List[Lazy] = field(default_factory=list)  # float64 refs to drop after the case


def rotating(base: Sequence[Any]) -> Callable[[int], Tuple[Any, ...]]:
    """make_inputs for a tuple of operands: copy 0 is `base`, copy i > 0 clones every tensor and
    deep-copies every module (its own weights)."""
    base = tuple(base)

    def dup(t: Any) -> Any:
        if isinstance(t, torch.nn.Module):
            return copy.deepcopy(t)
        return t.clone() if isinstance(t, torch.Tensor) else t

    def make(i: int) -> Tuple[Any, ...]:
        return base if i == 0 else tuple(dup(t) for t in base)

    return make


def static_impl(ctx: "Ctx", op: str, M: int, why: str, fn: Callable[..., Any], base: Sequence[Any], nbytes: int,
                flops: float, check: Any, name: str = "tq auto static") -> "Impl":
    """The row of `op` with static_weight=True (fn(*base) passes it): on sm_90 the decode GEMV
    issues its first weight loads before its PDL wait (the weights here are never rewritten)."""
    skip = path_skip(ctx, op, "auto", M, why) or ("" if ctx.on_gpu else "static_weight is a CUDA launch hint")
    return Impl(name=name, kind="torchquant", fn=fn, make_inputs=rotating(base), nbytes=nbytes, flops=flops,
                check=check, skip=skip or None,
                note="static_weight=True: first weight loads before the PDL wait (sm_90)")


# ------------------------------------------------------- shared row makers --
# Paths timed only for M <= --forced-max-m (CUDA-core or decode-only kernels),
# with the reason the rows above that say n/a.
SCALAR_PATHS = {
    "fma": "decode-only path",
    "gemv": "decode-only path",
    "simt": "CUDA-core fallback path",
}


def path_skip(ctx: "Ctx", op: str, path: str, M: int, why: str = "") -> str:
    """Why the row of torch.ops.torchquant.<op>(..., path) at this M is n/a ("" when it runs)."""
    if why:
        return why
    if not has_kernel(op, ctx.device):
        return f"{op} has no {ctx.device.type} kernel in this build"
    if path != "auto" and not ctx.on_gpu:
        return "CUDA-only path"
    if path in SCALAR_PATHS and M > ctx.forced_max_m:
        return f"{SCALAR_PATHS[path]}, timed for M <= {ctx.forced_max_m}"
    if path == "wgmma" and torch.cuda.get_device_capability(ctx.device) < (9, 0):
        return "wgmma needs sm_90a"
    return ""


def path_impls(
    ctx: "Ctx", op: str, M: int, why: str, paths: Sequence[str], fn: Callable[..., Any], base: Sequence[Any],
    nbytes: int, flops: float, check: Any, series: str, label: str = "tq",
) -> List["Impl"]:
    """torchquant rows "<label> auto", "<label> <path>", ...: fn(*base, path=path),
    the auto row in the cross-format plots as `series`."""
    return [
        Impl(
            name=f"{label} {path}" if (path != "auto" or label == "tq") else label,
            kind="torchquant",
            fn=functools.partial(fn, path=path),
            make_inputs=rotating(base),
            nbytes=nbytes,
            flops=flops,
            check=check,
            series=series if path == "auto" else None,
            skip=path_skip(ctx, op, path, M, why) or None,
        )
        for path in ("auto",) + tuple(paths)
    ]


def bf16_peer(x: torch.Tensor, w: torch.Tensor, flops: float, lazies: List["Lazy"],
              name: str = "bf16 F.linear") -> "Impl":
    """The dense bf16 layer F.linear(x, w) (cuBLAS on GPU): the `vs bf16` denominator."""
    N = w.shape[0]
    chk, lz = rel_check(lambda x=x, w=w: linear64_rows(x, lambda a, b: w[a:b], N))
    lazies.append(lz)
    return Impl(name=name, kind="peer", fn=F.linear, make_inputs=rotating((x, w)),
                nbytes=nbytes(x, w) + x.shape[0] * N * 2, flops=flops, check=chk,
                peer_key="bf16", series="bf16 F.linear")


def shape_weights(ctx: "Ctx", shape_list: Sequence[Any], seed_base: int) -> Iterable[Tuple[Any, torch.Tensor, torch.Generator]]:
    """Per shape: (shape, a bf16 [N, K] randn weight, the generator that drew it,
    seeded from the shape so every run and every path sees the same operands)."""
    gen = torch.Generator(device=ctx.device)
    for shape in shape_list:
        gen.manual_seed(seed_base + shape.N + 7 * shape.K)
        yield shape, torch.randn(shape.N, shape.K, device=ctx.device, dtype=OUT_DTYPE, generator=gen), gen


def nbytes(*tensors: Any) -> int:
    total = 0
    for t in tensors:
        if isinstance(t, torch.Tensor):
            total += t.numel() * t.element_size()
        elif isinstance(t, (list, tuple)):
            total += nbytes(*t)
    return total


def first_line(e: BaseException, limit: int = 160) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0] if msg else ''}"[:limit]


def cuda_alive(device: torch.device) -> bool:
    if device.type != "cuda":
        return True
    try:
        torch.cuda.synchronize(device)
        torch.zeros(1, device=device).add_(1).item()
        return True
    except Exception:
        return False


ROW_FIELDS = [
    "op", "model", "layer", "N", "K", "M", "impl", "kind", "series",
    "time_us", "min_us", "spread", "tbps", "pct_ceiling", "tflops",
    "bytes", "flops", "copies", "mode", "check", "check_worst", "check_gate",
    "ceiling_tbps", "note",
]


def _fmt_float(v: Any, nd: int = 4) -> Any:
    return round(v, nd) if isinstance(v, float) and math.isfinite(v) else v


class Runner:
    """Runs Cases, prints one line per row, collects rows."""

    def __init__(self, op: str, device: torch.device, ceiling_tbps: float, timing_kw: Optional[dict] = None):
        self.op, self.device, self.ceiling = op, device, ceiling_tbps
        self.timing_kw = timing_kw or {}
        self.rows: List[Dict[str, Any]] = []
        self.failed_checks: List[str] = []
        self.dead = False

    def run_case(self, case: Case) -> List[Dict[str, Any]]:
        rows: List[Dict[str, Any]] = []
        for impl in case.impls:
            row = self._run_impl(case, impl)
            rows.append(row)
            self._print(row)
            if self.dead:
                break
        add_speedups(rows)
        for lz in case.cleanup:
            lz.clear()
        self.rows.extend(rows)
        return rows

    def _run_impl(self, case: Case, impl: Impl) -> Dict[str, Any]:
        s = case.shape
        row: Dict[str, Any] = dict(
            op=self.op, model=s.model, layer=s.layer, N=s.N, K=s.K, M=case.M, impl=impl.name,
            kind=impl.kind, series=impl.series or "", peer_key=impl.peer_key or "",
            time_us=None, min_us=None, spread=None, tbps=None, pct_ceiling=None, tflops=None,
            bytes=impl.nbytes, flops=impl.flops, copies=None, mode="", check="", check_worst=None,
            check_gate="", ceiling_tbps=_fmt_float(self.ceiling), note=impl.note,
        )
        if impl.skip:
            row["check"] = "n/a"
            row["note"] = impl.skip
            return row
        try:
            inp = impl.make_inputs(0)
            out = impl.fn(*inp)
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
            if impl.check is not None:
                chk = impl.check(out)
                row["check"], row["check_worst"], row["check_gate"] = chk.status, _fmt_float(chk.worst), chk.gate
                if chk.status != "ok":
                    where = s.nk if s.N else s.model
                    self.failed_checks.append(f"{self.op} {where} M={case.M} {impl.name}: {chk.text()}")
            else:
                row["check"] = "unchecked"
            del out, inp
        except Exception as e:
            row["check"] = "error"
            row["note"] = first_line(e)
            if impl.kind == "torchquant":
                # A torchquant row that raises is a failure of ours (a peer that
                # cannot run a shape is only a note): it must fail the run.
                where = s.nk if s.N else s.model
                self.failed_checks.append(f"{self.op} {where} M={case.M} {impl.name}: raised {row['note']}")
            if not cuda_alive(self.device):
                self.dead = True
                row["note"] += " [CUDA context lost: stopping this benchmark]"
            return row
        try:
            kw = dict(self.timing_kw)
            if self.device.type == "cuda":
                kw["min_copies"] = max(kw.get("min_copies", timing.MIN_COPIES), impl.min_copies)
            t = timing.time_fn(impl.fn, impl.make_inputs, impl.nbytes, self.device, **kw)
        except Exception as e:
            row["note"] = (row["note"] + "; " if row["note"] else "") + "timing failed: " + first_line(e)
            if not cuda_alive(self.device):
                self.dead = True
                row["note"] += " [CUDA context lost: stopping this benchmark]"
            return row
        us = t["median_us"]
        tbps = impl.nbytes / (us * 1e-6) / 1e12
        row.update(
            time_us=_fmt_float(us, 3), min_us=_fmt_float(t["min_us"], 3), spread=_fmt_float(t["spread"]),
            tbps=_fmt_float(tbps), pct_ceiling=_fmt_float(100.0 * tbps / self.ceiling, 2),
            tflops=_fmt_float(impl.flops / (us * 1e-6) / 1e12), copies=t["copies"], mode=t["mode"],
        )
        return row

    def _print(self, r: Dict[str, Any]) -> None:
        where = f"{r['N']}x{r['K']}" if r["N"] else r["model"]
        if r["time_us"] is None:
            print(f"[{self.op}] {where} M={r['M']:<5} {r['impl']:<24} n/a   {r['note']}", flush=True)
            return
        print(
            f"[{self.op}] {where} M={r['M']:<5} {r['impl']:<24} {r['time_us']:>10.2f} us "
            f"{r['tbps']:>6.2f} TB/s {r['pct_ceiling']:>6.1f}% {r['tflops']:>8.2f} TFLOP/s  {r['check']}"
            + (f"  [{r['mode']}]" if r["mode"] != "graph" and self.device.type == "cuda" else ""),
            flush=True,
        )


def add_speedups(rows: List[Dict[str, Any]]) -> None:
    """speedup_vs_<peer_key> = peer time / this row's time, for every timed peer of the case."""
    peers = {r["peer_key"]: r["time_us"] for r in rows if r["kind"] == "peer" and r["peer_key"]}
    timed = {k: v for k, v in peers.items() if v}
    best_key = min(timed, key=timed.get) if timed else None
    for r in rows:
        for k in peers:
            v = timed.get(k)
            r[f"vs_{k}"] = _fmt_float(v / r["time_us"], 3) if (v and r["time_us"]) else None
        r["best_peer"] = best_key or ""
        r["vs_best_peer"] = _fmt_float(timed[best_key] / r["time_us"], 3) if (best_key and r["time_us"]) else None


# ----------------------------------------------------------------- writers --
def columns_for(rows: List[Dict[str, Any]]) -> List[str]:
    extra: List[str] = []
    for r in rows:
        for k in r:
            if k.startswith("vs_") and k not in extra:
                extra.append(k)
    vs = [k for k in extra if k != "vs_best_peer"] + ["best_peer", "vs_best_peer"]
    i = ROW_FIELDS.index("tflops") + 1
    return ROW_FIELDS[:i] + vs + ROW_FIELDS[i:]


def write_csv(path: str, rows: List[Dict[str, Any]], stamp: Dict[str, str], extra_header: Sequence[str] = ()) -> None:
    cols = columns_for(rows)
    with open(path, "w", newline="") as f:
        for k, v in stamp.items():
            f.write(f"# {k}: {v}\n")
        for line in extra_header:
            f.write(f"# {line}\n")
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in cols})


def read_csv(path: str) -> Tuple[Dict[str, str], List[Dict[str, Any]]]:
    """(stamp lines as a dict, rows with numbers parsed) of a file written by write_csv."""
    stamp: Dict[str, str] = {}
    lines: List[str] = []
    with open(path) as f:
        for line in f:
            if line.startswith("# "):
                k, _, v = line[2:].rstrip("\n").partition(": ")
                stamp[k] = v
            else:
                lines.append(line)
    rows = []
    for r in csv.DictReader(lines):
        out: Dict[str, Any] = {}
        for k, v in r.items():
            if v == "":
                out[k] = None
                continue
            try:
                out[k] = int(v) if re.fullmatch(r"-?\d+", v) else float(v)
            except ValueError:
                out[k] = v
        rows.append(out)
    return stamp, rows


def fmt_bw(tbps: float) -> str:
    return f"{tbps:.3f} TB/s" if tbps >= 0.1 else f"{tbps * 1e3:.2f} GB/s"


def fmt_time(v: Optional[float]) -> str:
    if v is None:
        return "n/a"
    return f"{v:.1f}" if v >= 100 else f"{v:.2f}"


def fmt_num(v: Optional[float], nd: int = 2, suffix: str = "") -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    if isinstance(v, (int, float)) and abs(v) >= 100:
        return f"{v:.0f}{suffix}"
    return f"{v:.{nd}f}{suffix}"


def md_table(header: Sequence[str], body: Iterable[Sequence[str]]) -> List[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in body]
    return out


def check_cell(r: Dict[str, Any]) -> str:
    c = r.get("check") or ""
    if c in ("ok", "FAIL") and r.get("check_worst") is not None:
        return f"{c} ({r['check_worst']:.3g})" if c == "ok" else f"**FAIL** ({r['check_worst']:.3g})"
    return c


def op_markdown(op: str, rows: List[Dict[str, Any]], stamp: Dict[str, str], meta: Dict[str, Any]) -> str:
    vs_cols = [k for k in columns_for(rows) if k.startswith("vs_") and k != "vs_best_peer"]
    lines = [f"# torchquant benchmark: {op}", "", f"_{stamp_text(stamp)}_", ""]
    lines += [
        f"Read ceiling measured in this run: **{fmt_bw(meta['ceiling_tbps'])}** "
        f"({meta.get('ceiling_method', '?')} over {meta.get('ceiling_bytes', 0) / 2**20:.0f} MiB). "
        f"Timing: {meta.get('timing', '')}",
        "",
        "TB/s counts weight bytes (incl. scales/metadata) + activation + output; TFLOP/s counts 2MNK; "
        "`vs X` = X's time / this row's time (>1: this row is faster). check: worst error / gate "
        "against float64 (<= 1 passes).",
        "",
    ]
    if meta.get("notes"):
        lines += [f"- {n}" for n in meta["notes"]] + [""]
    by_shape: Dict[Tuple[int, int], List[Dict[str, Any]]] = {}
    for r in rows:
        by_shape.setdefault((r["N"], r["K"]), []).append(r)
    for (n, k), rs in by_shape.items():
        lines += [f"## {rs[0]['model']} {rs[0]['layer']}" + (f": N x K = {n} x {k}" if n else ""), ""]
        header = ["M", "impl", "time us", "TB/s", "% ceil", "TFLOP/s"] + [c.replace("_", " ") for c in vs_cols] + ["check", "note"]
        body = []
        for r in rs:
            body.append(
                [str(r["M"]), r["impl"], fmt_time(r["time_us"]), fmt_num(r["tbps"]), fmt_num(r["pct_ceiling"], 1, "%"),
                 fmt_num(r["tflops"])]
                + [fmt_num(r.get(c), 2, "x") for c in vs_cols]
                + [check_cell(r), (r.get("note") or "") + ("" if (r.get("mode") in ("graph", "", None) or str(r.get("mode", "")).startswith("cpu")) else f" [{r['mode']}]")]
            )
        lines += md_table(header, body) + [""]
    return "\n".join(lines)


# --------------------------------------------------------------- the main --
def bench_argparser(op: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=f"torchquant benchmark: {op}")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="the small subset (default)")
    g.add_argument("--full", action="store_true", help="every model shape and the full M sweep")
    p.add_argument("--out", default=None, help="output folder (default benchmarks/results/<device-slug>/)")
    p.add_argument("--shapes", default="", help="comma-separated substrings of shape labels, e.g. 'lm_head,4096x4096'")
    p.add_argument("--ms", default="", help="comma-separated M list overriding the mode's, e.g. '1,8,64'")
    p.add_argument("--replays", type=int, default=timing.REPLAYS, help="graph replays per timing")
    p.add_argument("--device", default=None, help="cuda, cuda:1 or cpu (default: cuda if available)")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU mode: threads for torch.utils.benchmark (default torch.get_num_threads())")
    p.add_argument("--forced-max-m", type=int, default=64,
                   help="largest M at which scalar decode-only forced paths are timed (auto is always timed)")
    return p


def pick_device(arg: Optional[str]) -> torch.device:
    if arg:
        dev = torch.device(arg)
    else:
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if dev.type == "cuda":
        if dev.index is None:
            dev = torch.device("cuda", torch.cuda.current_device())
        torch.cuda.set_device(dev)
    return dev


def default_out(device: torch.device) -> str:
    return os.path.join(HERE, "results", slug(device_name(device)))


@dataclass
class Ctx:
    """Everything a script's case generator needs."""

    device: torch.device
    mode: str
    forced_max_m: int
    tq: Optional[Any]
    tq_err: str
    notes: List[str] = field(default_factory=list)

    @property
    def on_gpu(self) -> bool:
        return self.device.type == "cuda"

    def note_once(self, text: str) -> None:
        if text and text not in self.notes:
            self.notes.append(text)
            print(f"note: {text}", flush=True)


def bench_main(
    op: str,
    make_cases: Callable[[Ctx, List[shapes_mod.Shape], Tuple[int, ...]], Iterable[Case]],
    argv: Optional[Sequence[str]] = None,
    select_shapes: Optional[Callable[[Ctx, argparse.Namespace], Tuple[List[Any], Tuple[int, ...]]]] = None,
) -> int:
    """Parse args, measure the read ceiling, run every case, write <out>/<op>.{csv,md,json}.

    Exit status: 0; 2 when any correctness check failed (files still written);
    3 when the CUDA context was lost mid-run (partial files written).
    """
    args = bench_argparser(op).parse_args(argv)
    mode = "full" if args.full else "quick"
    device = pick_device(args.device)
    tq, tq_err = load_torchquant()
    ctx = Ctx(device=device, mode=mode, forced_max_m=args.forced_max_m, tq=tq, tq_err=tq_err)
    if tq is None:
        ctx.note_once(f"torchquant is not importable ({tq_err[:200]}): torchquant rows are n/a, peers still run")
    if device.type != "cuda":
        ctx.note_once(
            "no CUDA device: CPU mode, tiny shapes, torch.utils.benchmark (warm caches); "
            "these numbers say nothing about GPU performance"
        )
    out_dir = args.out or default_out(device)
    os.makedirs(out_dir, exist_ok=True)
    stamp = make_stamp(device)
    print(f"== {op}: {stamp_text(stamp)}", flush=True)

    t0 = time.time()
    ceil = timing.measure_read_ceiling(device)
    print(
        f"[{op}] read ceiling: {ceil['tbps']:.3f} TB/s ({ceil['method']}, "
        + ", ".join(f"{k} {v:.3f}" for k, v in ceil["per_method"].items())
        + ")",
        flush=True,
    )
    ms_override = tuple(int(m) for m in args.ms.split(",") if m.strip())
    if select_shapes is not None:
        shape_list, ms = select_shapes(ctx, args)
    else:
        shape_list, ms = shapes_mod.select(mode, device.type == "cuda", args.shapes, ms_override)

    timing_kw: Dict[str, Any] = (
        {"replays": args.replays} if device.type == "cuda" else {"min_run_time": 0.05, "num_threads": args.threads}
    )
    runner = Runner(op, device, ceil["tbps"], timing_kw)
    # Decode Ms (<= 16) of every shape first, then the larger ones: on the H200 a
    # shape's M = 2048 cases (seconds of full-power GEMMs) left the next shape's
    # first decode measurement 8-11 % slow (run 2026-12-01_0541: "tq auto" at
    # M = 1, timed right after, read 74.0 us against 67.3 us for the same kernel
    # as "tq mma" a moment later), so they no longer precede any decode case.
    groups = [g for g in (tuple(m for m in ms if m <= 16), tuple(m for m in ms if m > 16)) if g]
    try:
        for group in groups:
            for case in make_cases(ctx, shape_list, group):
                runner.run_case(case)
                del case
                if runner.dead:
                    break
            if runner.dead:
                break
    finally:
        if device.type == "cuda":
            torch.cuda.empty_cache()
    meta = {
        "op": op,
        "mode": mode,
        "stamp": stamp,
        "ceiling_tbps": ceil["tbps"],
        "ceiling_method": ceil["method"],
        "ceiling_bytes": ceil["nbytes"],
        "ceiling_per_method": ceil["per_method"],
        "timing": (
            f"cold L2 (rotation over > {timing.L2_FACTOR:g}x L2 of operand copies), CUDA graph of R launches, "
            f"median per-launch over {args.replays} replays; torchquant decode kernels "
            f"{pdl_note(device)}" if device.type == "cuda"
            else "torch.utils.benchmark blocked_autorange (CPU, warm caches)"
        ),
        "elapsed_s": round(time.time() - t0, 1),
        "notes": ctx.notes,
        "failed_checks": runner.failed_checks,
        "cuda_context_lost": runner.dead,
        "shapes": [s.label if hasattr(s, "label") else str(s) for s in shape_list],
        "ms": list(ms),
    }
    # Rows back in shape order, then M (the order the tables and CSVs always had).
    first: Dict[Any, int] = {}
    for r in runner.rows:
        first.setdefault((r.get("model"), r.get("layer"), r.get("N"), r.get("K")), len(first))
    runner.rows.sort(key=lambda r: (first[(r.get("model"), r.get("layer"), r.get("N"), r.get("K"))],
                                    int(r.get("M") or 0)))
    header = [f"read_ceiling_tbps: {ceil['tbps']:.4f} ({ceil['method']})", f"timing: {meta['timing']}"]
    write_csv(os.path.join(out_dir, f"{op}.csv"), runner.rows, stamp, header)
    with open(os.path.join(out_dir, f"{op}.md"), "w") as f:
        f.write(op_markdown(op, runner.rows, stamp, meta))
    with open(os.path.join(out_dir, f"{op}.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"[{op}] wrote {out_dir}/{op}.csv, .md, .json in {meta['elapsed_s']} s", flush=True)
    if runner.failed_checks:
        print(f"[{op}] CORRECTNESS CHECK FAILED ({len(runner.failed_checks)}):", flush=True)
        for line in runner.failed_checks:
            print("   " + line, flush=True)
    if runner.dead:
        return 3
    return 2 if runner.failed_checks else 0
