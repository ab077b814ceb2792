"""One whole decode step of a Llama-3-8B-shaped decoder stack, per format.

bench_e2e times a layer's projections alone. A user's decode step also runs
the rest of the layer, which costs the same in every format and so dilutes
the speedup: this script times everything a Llama-3 decoder layer does for
M sequences that each add one token to a KV cache of --shapes context length:

  RMSNorm -> qkv (one fused projection) -> RoPE on q and k -> k, v written
  into the cache at the step's position -> attention over the cache (SDPA,
  32 query heads sharing 8 KV heads, head dim 128) -> o -> residual add ->
  RMSNorm -> gate_up (fused) -> SiLU(gate) * up -> down -> residual add.

Random weights (nothing is downloaded), drawn at nn.Linear's scale (std
1 / sqrt(K)) so the attention scores are O(1) as in a trained model; the KV
cache holds random unit-scale keys and values. Each rotation copy of
timing.time_gpu is a layer of the stack with its own weights and cache (at
least 4, more if 4 layers fit in 8x L2), so every layer reads its weights
and its cache from HBM, as in a forward pass; times are per layer.

Rows:
  bf16 nn.Linear              the layer with bf16 nn.Linear projections (peer "bf16")
  QuantLinear <fmt>           the same layer with every projection replaced by
                              QuantLinear.from_float(..., fmt) ("<fmt> static":
                              static_weights=True, csrc/common/pdl.h)
  layer without projections   the norms, RoPE, cache write, attention, SiLU and
                              residuals alone (each projection replaced by a
                              preallocated output of its shape): the part no
                              weight format changes; timing only, no check

Variants ("shapes"): contexts 1024 and 4096 on GPU (16 on CPU) with the
elementwise parts in eager PyTorch as Hugging Face's Llama writes them (RMSNorm,
RoPE and SiLU x up take several small kernels each), and the first context with
each of those parts fused into one kernel by torch.compile, as inference
engines run them (the projections, cache write and attention are the same
calls in both). --shapes "context 1024" picks variants by substring (entries
without "context" are ignored). M = 1 and 8 (--ms).

Bytes: the four projections' weights (incl. scales / metadata), the KV cache
(read whole; the new token's slot is written) and the layer's activations.
Check, every row but the last, on the first layer of the stack: each projection
against float64 over its own input and operands (the derived fp32-accumulation
bound over the dequantized weight for fp8_block / nvfp4 / sparse24, the int8
epilogue bound over quantize_int8's codes for the W8A8 formats, a relative
sanity gate of 1e-2 for bf16 cuBLAS), and the layer's output against a float64
run of the rest of the layer given those projection outputs (relative
Frobenius error <= 1e-2: a sanity gate over the bf16 roundings between ops).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable, List, Optional, Tuple

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common as C  # noqa: E402
import shapes as S  # noqa: E402

OP = "decode"
MIN_LAYERS = 4  # rotation copies = layers of the stack
ROPE_THETA = 500000.0  # Llama 3
RMS_EPS = 1e-5


@dataclass(frozen=True)
class Config:
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    inter: int

    @property
    def qkv_out(self) -> int:
        return (self.heads + 2 * self.kv_heads) * self.head_dim


LLAMA3_8B = Config(4096, 32, 8, 128, 14336)
TINY = Config(256, 4, 2, 64, 512)
GPU_CONTEXTS = (1024, 4096)
CPU_CONTEXTS = (16,)

FORMATS = ("int8", "int8 static", "fp8_block", "fp8_block static", "nvfp4", "nvfp4 static",
           "sparse24", "int8_sparse24", "int8_sparse24 static")


def rms_norm(h: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Llama's RMSNorm: statistics in fp32, the normalized value back in h's dtype, times w."""
    hf = h.float() if h.dtype != torch.float64 else h
    hf = hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + RMS_EPS)
    return hf.to(h.dtype) * w


def rope(t: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary embedding (the rotate-half form) of t [M, heads, D] at one position."""
    half = t.shape[-1] // 2
    rot = torch.cat((-t[..., half:], t[..., :half]), dim=-1)
    return t * cos + rot * sin


def rope_qk(y: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, hq: int, hk: int, d: int
            ) -> Tuple[torch.Tensor, torch.Tensor]:
    """q and k of the qkv projection's output y [M, (hq + 2 hk) d], rotated."""
    M = y.shape[0]
    return (rope(y[:, : hq * d].reshape(M, hq, d), cos, sin),
            rope(y[:, hq * d : (hq + hk) * d].reshape(M, hk, d), cos, sin))


def silu_mul(gu: torch.Tensor, inter: int) -> torch.Tensor:
    return F.silu(gu[:, :inter]) * gu[:, inter:]


class Elementwise:
    """The layer's elementwise parts: eager PyTorch as Hugging Face's Llama writes them (a few
    kernels each), or each part fused by torch.compile (one kernel each, as inference engines
    run them)."""

    def __init__(self, compiled: bool):
        self.compiled = compiled
        wrap = (lambda f: torch.compile(f, fullgraph=True, dynamic=False)) if compiled else (lambda f: f)
        self.norm, self.rope_qk, self.silu_mul = wrap(rms_norm), wrap(rope_qk), wrap(silu_mul)


EAGER = Elementwise(False)


def layer_step(cfg: Config, pos: int, h: torch.Tensor, ln1: torch.Tensor, qkv: Callable, o: Callable,
               ln2: torch.Tensor, gate_up: Callable, down: Callable, k_cache: torch.Tensor,
               v_cache: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
               ew: Elementwise = EAGER) -> torch.Tensor:
    """One decoder layer for M new tokens at position `pos` (h [M, hidden]; caches [M, kv_heads,
    context, head_dim], slot pos overwritten with this step's k, v)."""
    M = h.shape[0]
    D, Hq, Hk = cfg.head_dim, cfg.heads, cfg.kv_heads
    y = qkv(ew.norm(h, ln1))
    q, k = ew.rope_qk(y, cos, sin, Hq, Hk, D)
    v = y[:, (Hq + Hk) * D :].reshape(M, Hk, D)
    k_cache[:, :, pos] = k
    v_cache[:, :, pos] = v
    a = F.scaled_dot_product_attention(q.unsqueeze(2), k_cache, v_cache, enable_gqa=True)
    h = h + o(a.reshape(M, Hq * D))
    gu = gate_up(ew.norm(h, ln2))
    return h + down(ew.silu_mul(gu, cfg.inter))


def proj_check(label: str, mod: Any, x: torch.Tensor, y: torch.Tensor) -> C.Check:
    """One projection's output y = mod(x) against float64 over the same input and operands: the
    derived int8 epilogue bound for the W8A8 formats (the activation quantized by quantize_int8,
    as the module does), a relative sanity gate for the others (bench_e2e's checks)."""
    fmt = label.split(" ")[0]
    if fmt in ("int8", "int8_sparse24"):
        assert mod.act_symmetric, "bench_decode builds symmetric W8A8 layers"
        a_q, a_s, _ = torch.ops.torchquant.quantize_int8(x, True, True)
        w_q = mod.weight_q if fmt == "int8" else torch.ops.torchquant.decompress24(mod.weight_values, mod.weight_meta)
        chk, _ = C.int8_check(a_q, a_s, w_q, mod.weight_scale, y.dtype)
        return chk(y)
    if isinstance(mod, torch.nn.Linear):
        return C.check_rel(y, C.linear64(x, mod.weight))
    # fp8_block / nvfp4 / sparse24 at M <= 16 run their GEMVs: fp32 accumulation over the exact
    # dequantized weight, so the derived bound applies (formats.md).
    w = mod.dequantized_weight(torch.float32)
    chk, _ = C.float_check(x, lambda a, b: w[a:b].double(), w.shape[0], y.dtype)
    return chk(y)


class Layer:
    """One layer of the stack for one format: its operands and its step."""

    def __init__(self, cfg: Config, pos: int, mods: Optional[List[Any]], norms: Tuple[torch.Tensor, torch.Tensor],
                 caches: Tuple[torch.Tensor, torch.Tensor], rot: Tuple[torch.Tensor, torch.Tensor], ew: Elementwise):
        self.cfg, self.pos, self.ew = cfg, pos, ew
        self.mods, self.norms, self.caches, self.rot = mods, norms, caches, rot

    def operands(self, h: torch.Tensor, outs: Optional[List[torch.Tensor]] = None) -> Tuple[Any, ...]:
        mods = self.mods if self.mods is not None else [(lambda x, t=t: t) for t in outs]
        return (h, self.norms[0], mods[0], mods[1], self.norms[1], mods[2], mods[3], *self.caches, *self.rot)

    def fn(self, *ops: Any) -> Tuple[torch.Tensor, List[Tuple[torch.Tensor, torch.Tensor]]]:
        """The step, and each projection's (input, output) for the check (references only: no
        extra work on the device)."""
        recs: List[Tuple[torch.Tensor, torch.Tensor]] = []

        def rec(m: Callable) -> Callable:
            def run(x: torch.Tensor) -> torch.Tensor:
                y = m(x)
                recs.append((x, y))
                return y
            return run

        h, ln1, qkv, o, ln2, gate_up, down, *rest = ops
        with torch.no_grad():
            return layer_step(self.cfg, self.pos, h, ln1, rec(qkv), rec(o), ln2, rec(gate_up), rec(down),
                              *rest, ew=self.ew), recs


_COMPILED: dict = {}


def compiled_elementwise(cfg: Config, dev: torch.device) -> Tuple[Elementwise, str]:
    """The torch.compile'd elementwise parts, tried once on small inputs of the layer's widths (a
    missing compiler or Triton becomes the rows' n/a reason, not an error)."""
    if "ew" not in _COMPILED:
        try:
            ew = Elementwise(True)
            bf16 = C.OUT_DTYPE
            h = torch.zeros(1, cfg.hidden, device=dev, dtype=bf16)  # the cases compile their own Ms
            ew.norm(h, torch.ones(cfg.hidden, device=dev, dtype=bf16))
            ew.silu_mul(torch.zeros(1, 2 * cfg.inter, device=dev, dtype=bf16), cfg.inter)
            _COMPILED["ew"] = (ew, "")
        except Exception as e:
            _COMPILED["ew"] = (EAGER, "torch.compile of the elementwise parts failed: " + C.first_line(e))
    return _COMPILED["ew"]


def make_cases(ctx: C.Ctx, shape_list: List[Any], ms: Tuple[int, ...]) -> Iterable[C.Case]:
    dev, bf16 = ctx.device, C.OUT_DTYPE
    cfg = LLAMA3_8B if ctx.on_gpu else TINY
    specs = [("qkv", cfg.qkv_out, cfg.hidden), ("o", cfg.hidden, cfg.heads * cfg.head_dim),
             ("gate_up", 2 * cfg.inter, cfg.hidden), ("down", cfg.hidden, cfg.inter)]
    gen = torch.Generator(device=dev)
    gen.manual_seed(7000)
    lins = []
    for _, n, k in specs:
        lin = torch.nn.Linear(k, n, bias=False, device=dev, dtype=bf16)
        with torch.no_grad():
            lin.weight.copy_(torch.randn(n, k, device=dev, dtype=bf16, generator=gen) * k ** -0.5)
        lins.append(lin.eval().requires_grad_(False))  # inference: no autograd state in the caches
    norms = tuple(1.0 + 0.1 * torch.randn(cfg.hidden, device=dev, dtype=bf16, generator=gen) for _ in range(2))
    weight_bytes = {"bf16": sum(C.nbytes(m.weight) for m in lins)}

    QuantLinear, qerr = None, ""
    if ctx.tq is None:
        qerr = "torchquant not importable"
    else:
        try:
            from torchquant.nn import QuantLinear  # type: ignore
        except Exception as e:
            qerr = "torchquant.nn: " + C.first_line(e)
    quant: dict = {}
    for label in FORMATS:
        fmt, _, variant = label.partition(" ")
        if qerr:
            quant[label] = (None, qerr)
            continue
        try:
            mods = [QuantLinear.from_float(lin, fmt, static_weights=(variant == "static")).eval() for lin in lins]
            quant[label] = (mods, "")
            weight_bytes[label] = sum(C.nbytes(b) for m in mods for b in m.buffers())
        except Exception as e:
            quant[label] = (None, f"QuantLinear.from_float(..., {fmt!r}): " + C.first_line(e))

    for shape in shape_list:
        T = shape.K  # the context length (the new token's slot included)
        compiled = "compiled" in shape.layer
        ew, ew_skip = EAGER, ""
        if compiled:
            ew, ew_skip = compiled_elementwise(cfg, dev)
        pos = T - 1
        inv = 1.0 / (ROPE_THETA ** (torch.arange(0, cfg.head_dim, 2, device=dev, dtype=torch.float64) / cfg.head_dim))
        ang = pos * torch.cat((inv, inv))
        rot64 = (ang.cos(), ang.sin())
        rot = (rot64[0].to(bf16), rot64[1].to(bf16))
        for M in ms:
            h = torch.randn(M, cfg.hidden, device=dev, dtype=bf16, generator=gen)
            cache_shape = (M, cfg.kv_heads, T, cfg.head_dim)
            caches = tuple(torch.randn(cache_shape, device=dev, dtype=bf16, generator=gen) for _ in range(2))
            cache_bytes = 2 * C.nbytes(caches[0])
            act_bytes = 2 * M * (2 * cfg.hidden + cfg.qkv_out + 3 * cfg.inter + 2 * cfg.hidden)
            flops = 2.0 * M * sum(n * k for _, n, k in specs) + 4.0 * M * cfg.heads * T * cfg.head_dim

            def layer_check(mods: List[Any], label: str, h=h, caches=caches) -> Callable[[Any], C.Check]:
                """Each projection against float64 over its own input and operands, and the layer's
                output against a float64 run of the layer given those projections' outputs."""

                def chk(out: Any) -> C.Check:
                    y, recs = out
                    checks = [proj_check(label, m, x, yy) for m, (x, yy) in zip(mods, recs)]
                    outs = iter([yy.double() for _, yy in recs])
                    c64 = tuple(c.double() for c in caches)  # the step writes slot pos of its copy
                    ref = layer_step(cfg, pos, h.double(), norms[0].double(), lambda x: next(outs),
                                     lambda x: next(outs), norms[1].double(), lambda x: next(outs),
                                     lambda x: next(outs), *c64, *rot64)
                    checks.append(C.check_rel(y, ref, gate="layer given its projections: rel-fro<=0.01"))
                    return C.worst_of(checks)

                return chk

            impls: List[C.Impl] = []
            rows = [("bf16 nn.Linear", "peer", lins, "")] + [
                (f"QuantLinear {label}", "torchquant", quant[label][0], quant[label][1]) for label in FORMATS]
            for name, kind, mods, skip in rows:
                skip = ew_skip or skip
                if skip:
                    impls.append(C.Impl(name=name, kind=kind, fn=lambda *a: None, make_inputs=lambda i: (),
                                        nbytes=0, flops=flops, skip=skip))
                    continue
                layer = Layer(cfg, pos, mods, norms, caches, rot, ew)
                key = "bf16" if kind == "peer" else name.split(" ", 1)[1]
                chk = layer_check(mods, key)
                impls.append(C.Impl(
                    name=name, kind=kind, fn=layer.fn, make_inputs=C.rotating(layer.operands(h)),
                    nbytes=weight_bytes[key] + cache_bytes + act_bytes, flops=flops, check=chk,
                    peer_key="bf16" if kind == "peer" else None,
                    series=f"{name} decode step" if kind == "torchquant" else "bf16 decode step",
                    min_copies=MIN_LAYERS))
            # The rest of the layer: each projection returns a preallocated output of its shape.
            outs = [torch.randn(M, n, device=dev, dtype=bf16, generator=gen) * 0.1 for _, n, _ in specs]
            bare = Layer(cfg, pos, None, norms, caches, rot, ew)
            impls.append(C.Impl(
                name="layer without projections", kind="torchquant", fn=bare.fn, skip=ew_skip or None,
                make_inputs=C.rotating(bare.operands(h, outs)), nbytes=cache_bytes + act_bytes,
                flops=4.0 * M * cfg.heads * T * cfg.head_dim, check=None, min_copies=MIN_LAYERS,
                note="norms, RoPE, cache write, attention, SiLU, residuals: the same in every format"))
            yield C.Case(shape, M, impls)
            del h, caches, impls


def select(ctx: C.Ctx, args) -> Tuple[List[Any], Tuple[int, ...]]:
    ms = tuple(int(m) for m in args.ms.split(",") if m.strip()) or (S.E2E_MS if ctx.on_gpu else S.CPU_MS)
    name = "Llama-3-8B decode step" if ctx.on_gpu else "tiny decode step"
    contexts = GPU_CONTEXTS if ctx.on_gpu else CPU_CONTEXTS
    # Shape(model, layer, N, K): N = 0 keeps the tables' "model" labelling; K carries the context.
    shapes = [S.Shape(f"{name}, context {t}", "one decoder layer, eager", 0, t) for t in contexts]
    # The same layer with its norms, RoPE and SiLU x up each fused by torch.compile (the
    # projections, cache write and attention unchanged), at the first context.
    shapes.append(S.Shape(f"{name}, context {contexts[0]}, compiled elementwise",
                          "one decoder layer, norms / RoPE / SiLU x up compiled", 0, contexts[0]))
    # --shapes entries naming a context pick contexts; others (run_all passes its --shapes to every
    # benchmark) are ignored, as bench_e2e ignores them.
    want = [w.strip() for w in args.shapes.split(",") if "context" in w]
    if want:
        shapes = [s for s in shapes if any(w in f"{s.model} {s.layer}" for w in want)]
    return shapes, ms


def main(argv=None) -> int:
    return C.bench_main(OP, make_cases, argv, select_shapes=select)


if __name__ == "__main__":
    sys.exit(main())
