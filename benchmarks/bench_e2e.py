"""End to end: the linear layers of a Llama-3-8B decoder layer stack, per format.

One "launch" is the projections of one decoder layer, back to back, in two
layouts (two tables):
  "Llama-3-8B"        the 7 projections unfused: q (4096x4096), k, v
                      (1024x4096, GQA), o (4096x4096), gate, up (14336x4096),
                      down (4096x14336)
  "Llama-3-8B fused"  4 launches, as inference engines run the layer: qkv
                      (6144x4096), o, gate_up (28672x4096), down
q/k/v/gate/up read the layer input x [M, 4096], o reads an attention output
[M, 4096], down reads h [M, 14336].
Attention, norms and the activation function are not included. The rotation
copies of timing.time_gpu are the layers of the stack (at least 4, more if
4 layers fit in 8x L2), so every layer's weights come from HBM as in a real
forward pass. Times are per layer; M = 1 and 8.

Rows (a format where the op is missing or refuses says n/a):
  bf16 F.linear            7 x F.linear (peer "bf16")
  int8 tq (+act quant)     quantize_int8 of x, attn, h (3 launches) + 7 x int8_matmul auto
  fp8-block tq             7 x fp8_block_gemv auto
  fp8-block tq tiled       the same on the tiled weight (fp8_block_tile; tiled=True)
  nvfp4 tq                 7 x nvfp4_gemv auto
  nvfp4 tq layout4         the same on layout 4 (nvfp4_relayout / nvfp4_relayout_scale)
  2:4 tq                   7 x sparse24_gemv, only if torch.ops.torchquant has it
  fp8 rowwise _scaled_mm   pad M to 16 + per-token E4M3 quantization of x, attn, h (in the
                           timed region, as a layer would pay it) + 7 x torch._scaled_mm
  2:4 torch semi-structured  7 x F.linear over to_sparse_semi_structured (bf16) weights
  QuantLinear <fmt>        torchquant.nn.QuantLinear.from_float modules ("fp8_block w8a8":
                           prefill="w8a8", the FP8 tensor-core path at M > 16; "nvfp4 layout0":
                           nvfp4_layout=0, the formats.md packing in memory instead of the
                           default bf16 decode order (layout 3, docs/nvfp4_gemv.md 29-30),
                           "nvfp4 layout1" layout 1 (the default until 2026-12-05j);
                           "<fmt> static": static_weights=True, the
                           weight loads of the sm_90 GEMVs may start before the kernel just
                           before finishes, csrc/common/pdl.h; "fp8_block tiled" /
                           "tiled_static": fp8_tiled=True), when torchquant.nn
                           imports: the module path a user gets (int8, fp8_block, nvfp4,
                           sparse24, int8_sparse24)

Bytes: all 7 weights (incl. scales/metadata) + bf16 layer inputs per
projection + bf16 outputs. Every output of every projection is checked
against float64 once per M (strict bounds for the direct torchquant ops,
relative sanity gates for peers and modules); the row shows the worst.
"""

from __future__ import annotations

import copy
import os
import sys
from typing import Any, Callable, Iterable, List, Tuple

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_sparse24  # noqa: E402
import common as C  # noqa: E402
import shapes as S  # noqa: E402

OP = "e2e"
MIN_LAYERS = 4  # rotation copies = layers of the stack
BLOCK = 128


def multi_check(per_proj: List[Callable[[Any], C.Check]]) -> Callable[[Any], C.Check]:
    def chk(outs: Any) -> C.Check:
        return C.worst_of([c(o) for c, o in zip(per_proj, outs)])

    return chk


def fp8_rowwise(t: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    s = t.float().abs().amax(1, keepdim=True).clamp_min(1e-12) / 448.0
    return (t.float() / s).clamp(-448.0, 448.0).to(torch.float8_e4m3fn), s


class Layer:
    """One format's layer: flat operand tuple + a forward over it."""

    def __init__(self, name: str, kind: str, params: List[Tuple[Any, ...]], fwd, series=None, peer_key=None):
        self.name, self.kind, self.params, self.fwd = name, kind, params, fwd
        self.series, self.peer_key = series, peer_key
        self.arity = len(params[0]) if params else 0

    def flat(self, acts: Tuple[torch.Tensor, ...]) -> Tuple[Any, ...]:
        return tuple(acts) + tuple(t for p in self.params for t in p)

    def fn(self, *flat: Any) -> List[torch.Tensor]:
        acts, rest = flat[:3], flat[3:]
        ps = [rest[i * self.arity : (i + 1) * self.arity] for i in range(len(self.params))]
        return self.fwd(acts, ps)

    def weight_bytes(self) -> int:
        total = 0
        for p in self.params:
            for t in p:
                if isinstance(t, torch.Tensor) and type(t) is torch.Tensor:
                    total += C.nbytes(t)
                elif isinstance(t, torch.Tensor):  # semi-structured subclass
                    total += bench_sparse24.semi_structured_bytes(t)
                elif isinstance(t, torch.nn.Module):
                    total += sum(C.nbytes(b) for b in t.buffers())
        return total


def select_layer(ctx: C.Ctx, args) -> Tuple[List[Any], Tuple[int, ...]]:
    ms = tuple(int(m) for m in args.ms.split(",") if m.strip()) or (S.E2E_MS if ctx.on_gpu else S.CPU_MS)
    if ctx.on_gpu:
        return [("Llama-3-8B", S.LLAMA3_8B_LAYER), ("Llama-3-8B fused", S.LLAMA3_8B_LAYER_FUSED)], ms
    return [("tiny", S.CPU_LAYER), ("tiny fused", S.CPU_LAYER_FUSED)], ms


def make_cases(ctx: C.Ctx, layers: List[Any], ms: Tuple[int, ...]) -> Iterable[C.Case]:
    dev, bf16 = ctx.device, C.OUT_DTYPE
    ops = torch.ops.torchquant
    gen = torch.Generator(device=dev)
    for model, spec in layers:
        gen.manual_seed(5000)
        ws = [torch.randn(n, k, device=dev, dtype=bf16, generator=gen) for _, n, k in spec]
        src, k_in = S.layer_inputs(spec)  # which input each projection reads; K of x, attn, h
        shape = S.Shape(model, "decoder layer: " + ", ".join(p for p, _, _ in spec), 0, 0)
        flops_per_row = sum(2.0 * n * k for _, n, k in spec)
        tq = ctx.tq is not None

        def have(op: str) -> bool:
            return tq and C.has_kernel(op, dev)

        def quant_all(op: str, *a) -> Tuple[List[Tuple[torch.Tensor, ...]], str]:
            """op over the 7 weights, or ([()], why not)."""
            outs = []
            for w in ws:
                q, why = C.try_quantize(ctx, op, w, *a)
                if q is None:
                    return [()], why
                outs.append(q)
            return outs, ""

        # ----------------------------------------------------- the formats --
        layers_: List[Tuple[Layer, str]] = []  # (layer, skip reason)
        layers_.append(
            (
                Layer("bf16 F.linear", "peer", [(w,) for w in ws],
                      lambda a, ps, src=src: [F.linear(a[s], p[0]) for s, p in zip(src, ps)],
                      series="bf16 F.linear", peer_key="bf16"),
                "",
            )
        )

        def int8_fwd(a, ps, src=src):
            qs = [ops.quantize_int8(t, True, True) for t in a]
            return [ops.int8_matmul(qs[s][0], qs[s][1], None, p[0], p[1], None, None, bf16, "auto") for s, p in zip(src, ps)]

        skip = "" if (have("int8_matmul") and have("quantize_int8")) else "torchquant int8_matmul/quantize_int8 unavailable"
        params = [()]
        if not skip:
            params, skip = quant_all("quantize_int8", True, True)
            params = [tuple(p[:2]) for p in params]
        layers_.append((Layer("int8 tq (+act quant)", "torchquant", params, int8_fwd, series="int8 torchquant"), skip))

        skip = "" if have("fp8_block_gemv") else "torchquant fp8_block_gemv unavailable"
        params = [()]
        if not skip:
            params, skip = quant_all("quantize_fp8_block", BLOCK)
        layers_.append(
            (
                Layer("fp8-block tq", "torchquant", params,
                      lambda a, ps, src=src: [ops.fp8_block_gemv(a[s], p[0], p[1], BLOCK, None, "auto") for s, p in zip(src, ps)],
                      series="fp8-block torchquant"),
                skip,
            )
        )

        # The tiled fp8_block weight (fp8_block_tile; fp8_block_gemv(..., tiled=True): the direct
        # GEMV's, the ring kernel's and on sm_90 the wgmma GEMV's tiled forms, auto's choice among
        # them), decode only: the layer's projections all have N % 16 == 0 and K % 64 == 0.
        tskip = skip or ("" if have("fp8_block_tile") else "torchquant fp8_block_tile unavailable")
        tparams = [ops.fp8_block_tile(p[0], p[1]) for p in params] if not tskip else [()]
        layers_.append(
            (
                Layer("fp8-block tq tiled", "torchquant", tparams,
                      lambda a, ps, src=src: [ops.fp8_block_gemv(a[s], p[0], p[1], BLOCK, None, "auto", False, True)
                                              for s, p in zip(src, ps)],
                      series="fp8-block torchquant tiled"),
                tskip,
            )
        )

        skip = "" if have("nvfp4_gemv") else "torchquant nvfp4_gemv unavailable"
        params = [()]
        if not skip:
            params, skip = quant_all("quantize_nvfp4")
        layers_.append(
            (
                Layer("nvfp4 tq", "torchquant", params,
                      lambda a, ps, src=src: [ops.nvfp4_gemv(a[s], p[0], p[1], p[2], None, "auto") for s, p in zip(src, ps)],
                      series="nvfp4 torchquant"),
                skip,
            )
        )
        # nvfp4 layout 4 (layout 3 tiled: nvfp4_relayout / nvfp4_relayout_scale; auto runs the
        # direct GEMV on it at every M) beside layout 0's auto above and QuantLinear's layout 3
        tskip = skip or ("" if have("nvfp4_relayout_scale") else "torchquant nvfp4_relayout_scale unavailable")
        tparams = ([(ops.nvfp4_relayout(p[0], 4), ops.nvfp4_relayout_scale(p[1], 4), p[2]) for p in params]
                   if not tskip else [()])
        layers_.append(
            (
                Layer("nvfp4 tq layout4", "torchquant", tparams,
                      lambda a, ps, src=src: [ops.nvfp4_gemv(a[s], p[0], p[1], p[2], None, "auto", 4) for s, p in zip(src, ps)],
                      series="nvfp4 torchquant layout 4"),
                tskip,
            )
        )

        pr, _ = quant_all("prune24")
        pruned = [p[0] for p in pr] if pr != [()] else [bench_sparse24.local_prune24(w) for w in ws]
        if tq and C.has_op("sparse24_gemv"):
            params, skip = [()], ""
            for p in pruned:
                q, skip = C.try_quantize(ctx, "compress24", p)
                if q is None:
                    params = [()]
                    break
                params = [q] if params == [()] else params + [q]
            layers_.append(
                (
                    Layer("2:4 tq", "torchquant", params,
                          lambda a, ps, src=src: [ops.sparse24_gemv(a[s], p[0], p[1]) for s, p in zip(src, ps)],
                          series="2:4 torchquant"),
                    skip,
                )
            )

        # fp8 rowwise _scaled_mm: activation quantization inside the layer.
        def scaled_mm_fwd(a, ps, src=src):
            M = a[0].shape[0]
            Mp = (M + 15) // 16 * 16
            qa = [fp8_rowwise(F.pad(t, (0, 0, 0, Mp - M)) if Mp != M else t) for t in a]
            return [torch._scaled_mm(qa[s][0], p[0].t(), scale_a=qa[s][1], scale_b=p[1], out_dtype=bf16)[:M]
                    for s, p in zip(src, ps)]

        skip = ""
        if ctx.on_gpu and torch.cuda.get_device_capability(dev) < (8, 9):
            skip = "FP8 _scaled_mm needs sm_89+"
        params = []
        for w in ws:
            q, s = fp8_rowwise(w)
            params.append((q, s.reshape(1, -1).contiguous()))
        layers_.append(
            (Layer("fp8 rowwise _scaled_mm (+act quant)", "peer", params, scaled_mm_fwd,
                   series="fp8 rowwise torch._scaled_mm", peer_key="scaled_mm"), skip)
        )

        semi_skip = "" if ctx.on_gpu else "torch semi-structured sparsity is CUDA-only"
        semi_params: List[Tuple[Any, ...]] = [()]
        if not semi_skip:
            try:
                semi_params = [(torch.sparse.to_sparse_semi_structured(p),) for p in pruned]
            except Exception as e:
                semi_skip = "to_sparse_semi_structured: " + C.first_line(e)
        semi_layer = Layer("2:4 torch semi-structured", "peer", semi_params,
                           lambda a, ps, src=src: [F.linear(a[s], p[0]) for s, p in zip(src, ps)],
                           series="2:4 torch semi-structured (bf16)", peer_key="semi24")
        layers_.append((semi_layer, semi_skip))

        qlin_err = ""
        QuantLinear = None
        if tq:
            try:
                from torchquant.nn import QuantLinear  # type: ignore
            except Exception as e:
                qlin_err = "torchquant.nn: " + C.first_line(e)
        else:
            qlin_err = "torchquant not importable"
        for label in ("int8", "int8 static", "int8_sparse24 static", "fp8_block", "fp8_block static", "fp8_block tiled",
                      "fp8_block tiled_static", "fp8_block w8a8", "nvfp4", "nvfp4 static",
                      "nvfp4 layout0", "nvfp4 layout1", "sparse24", "int8_sparse24"):
            fmt, _, variant = label.partition(" ")
            qkw = {"w8a8": {"prefill": "w8a8"}, "layout0": {"nvfp4_layout": 0}, "layout1": {"nvfp4_layout": 1},
                   "static": {"static_weights": True}, "tiled": {"fp8_tiled": True},
                   "tiled_static": {"fp8_tiled": True, "static_weights": True}}.get(variant, {})
            skip, params = qlin_err, [()]
            if not skip:
                try:
                    mods = []
                    for w in ws:
                        lin = torch.nn.Linear(w.shape[1], w.shape[0], bias=False, device=dev, dtype=bf16)
                        with torch.no_grad():
                            lin.weight.copy_(w)
                        mods.append((QuantLinear.from_float(lin, fmt, **qkw).eval(),))
                    params = mods
                except Exception as e:
                    skip = f"QuantLinear.from_float(..., {fmt!r}): " + C.first_line(e)
            layers_.append(
                (Layer(f"QuantLinear {label}", "torchquant", params,
                       lambda a, ps, src=src: [p[0](a[s]) for s, p in zip(src, ps)]), skip)
            )

        # ------------------------------------------------------------ cases --
        for M in ms:
            acts = tuple(torch.randn(M, k, device=dev, dtype=bf16, generator=gen) for k in k_in)
            act_bytes = sum(M * k * 2 for _, _, k in spec)
            out_bytes = sum(M * n * 2 for _, n, _ in spec)
            lazies: List[C.Lazy] = []
            impls: List[C.Impl] = []
            for layer, skip in layers_:
                per_proj: List[Callable[[Any], C.Check]] = []
                if not skip:
                    for i, p in enumerate(layer.params):
                        x_in = acts[src[i]]
                        chk, lz = proj_check(layer.name, x_in, p, ws[i], pruned[i], bf16)
                        per_proj.append(chk)
                        lazies.append(lz)
                impls.append(
                    C.Impl(
                        name=layer.name,
                        kind=layer.kind,
                        fn=layer.fn,
                        make_inputs=layer_inputs(layer, acts),
                        nbytes=(layer.weight_bytes() + act_bytes + out_bytes) if not skip else 0,
                        flops=M * flops_per_row,
                        check=multi_check(per_proj) if per_proj else None,
                        peer_key=layer.peer_key,
                        series=layer.series,
                        skip=skip or None,
                        min_copies=MIN_LAYERS,
                    )
                )
            yield C.Case(shape, M, impls, cleanup=lazies)
            del acts, impls


def layer_inputs(layer: Layer, acts: Tuple[torch.Tensor, ...]) -> Callable[[int], Tuple[Any, ...]]:
    """Copy i of a layer: activations cloned, weights cloned (modules deep-copied,
    semi-structured weights rebuilt from a dense copy)."""
    cache = {0: layer.flat(acts)}

    def dup(t: Any) -> Any:
        if isinstance(t, torch.nn.Module):
            return copy.deepcopy(t)
        if isinstance(t, torch.Tensor) and type(t) is not torch.Tensor:
            return torch.sparse.to_sparse_semi_structured(t.to_dense())
        if isinstance(t, torch.Tensor):
            return t.clone()
        return t

    def make(i: int) -> Tuple[Any, ...]:
        if i not in cache:
            cache[i] = tuple(dup(t) for t in cache[0])
        return cache[i] if i == 0 else cache.pop(i)

    return make


def proj_check(name: str, x: torch.Tensor, p: Tuple[Any, ...], w: torch.Tensor, wp: torch.Tensor, od) -> Tuple[Callable, C.Lazy]:
    """The float64 check of one projection's output for one format."""
    if name.startswith("int8 tq"):
        a_q, a_s, _ = torch.ops.torchquant.quantize_int8(x, True, True)
        return C.int8_check(a_q, a_s, p[0], p[1], od)
    N = w.shape[0]
    if name.startswith("fp8-block tq tiled") or name.startswith("nvfp4 tq layout4"):
        # the operands in rows again (exact), once, when the check first runs
        rows: List[Tuple[torch.Tensor, ...]] = []

        def deq(a: int, b: int) -> torch.Tensor:
            ops = torch.ops.torchquant
            if not rows:
                rows.append(tuple(ops.fp8_block_tile(p[0], p[1], True)) if name.startswith("fp8") else
                            (ops.nvfp4_relayout(p[0], 4, True), ops.nvfp4_relayout_scale(p[1], 4, True)))
            if name.startswith("fp8"):
                return C.deq_fp8_block(rows[0][0][a:b], rows[0][1][a:b], BLOCK)
            return C.deq_nvfp4(rows[0][0][a:b], rows[0][1][a:b], p[2])

        return C.float_check(x, deq, N, od)
    if name.startswith("fp8-block tq"):
        return C.float_check(x, lambda a, b: C.deq_fp8_block(p[0][a:b], p[1][a:b], BLOCK), N, od)
    if name.startswith("nvfp4 tq"):
        return C.float_check(x, lambda a, b: C.deq_nvfp4(p[0][a:b], p[1][a:b], p[2]), N, od)
    if name.startswith("2:4 tq"):
        return C.float_check(x, lambda a, b: wp[a:b].to(torch.float64), N, od)
    if name.startswith("fp8 rowwise"):
        def ref():
            a8, s = fp8_rowwise(x)
            return C.linear64(a8.to(torch.float64) * s.double(), p[0].to(torch.float64) * p[1].double().reshape(-1, 1))

        return C.rel_check(ref)
    if name.startswith("2:4 torch"):
        return C.rel_check(lambda: C.linear64(x, wp))
    if name == "QuantLinear int8":
        # W8A8: the module quantizes the activation per token, so the reference does too.
        mod = p[0]
        a_q, a_s, _ = torch.ops.torchquant.quantize_int8(x, True, True)
        return C.int8_check(a_q, a_s, mod.weight_q, mod.weight_scale, od)
    if name == "QuantLinear int8_sparse24":
        # W8A8 over the 2:4 int8 weight: the exact integer product of the same operands.
        mod = p[0]
        a_q, a_s, _ = torch.ops.torchquant.quantize_int8(x, True, True)
        w_q = torch.ops.torchquant.decompress24(mod.weight_values, mod.weight_meta)
        return C.int8_check(a_q, a_s, w_q, mod.weight_scale, od)
    if name == "QuantLinear fp8_block w8a8" and x.shape[0] > 16:
        # W8A8 prefill: the module quantizes x to e4m3 in 1 x 128 blocks, so the
        # reference takes the same quantized activation (float64 over both).
        mod = p[0]

        def ref_w8a8():
            x_q, x_s = torch.ops.torchquant.quantize_fp8_act(x, 128)
            xh = C.deq_fp8_block(x_q, x_s.contiguous(), 128)
            return C.linear64(xh, C.deq_fp8_block(mod.weight_q, mod.weight_scale, 128))

        return C.rel_check(ref_w8a8)
    if name.startswith("QuantLinear"):
        # fp8_block / nvfp4 / sparse24: GEMV (strict-bound material) for small M, dequantize +
        # cuBLAS beyond; one sanity gate against the fp32-dequantized weight covers both.
        mod = p[0]
        return C.rel_check(lambda: C.linear64(x, mod.dequantized_weight(torch.float32)))
    return C.rel_check(lambda: C.linear64(x, w))


def main(argv=None) -> int:
    return C.bench_main(OP, make_cases, argv, select_shapes=select_layer)


if __name__ == "__main__":
    sys.exit(main())
