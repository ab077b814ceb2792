"""2:4 structured sparsity: torch's semi-structured sparse GEMM, torchquant's
own sparse24_gemv and its W8A8 2:4 GEMM sparse24_int8_matmul (where
torch.ops.torchquant has them) against the dense layers over the same pruned
weight.

Rows per (shape, M):
  tq auto / fma / mma / wgmma   torchquant's sparse24_gemv(x, values, meta, None, path)
                        over compress24's layout, only if hasattr(torch.ops.torchquant,
                        "sparse24_gemv") (otherwise the rows say n/a); "fma" is the
                        CUDA-core decode path, timed for M <= --forced-max-m; "wgmma" the
                        Hopper sparse-wgmma GEMM (sm_90 only)
  tq int8 2:4 [/ mma / simt]  sparse24_int8_matmul(a_q, a_scale, None, values8, meta8,
                        w_scale, None, None, bf16, path): the pruned weight quantized
                        per output channel (symmetric int8) then compress24'd, the
                        activation quantized per token (symmetric) outside the timed
                        region; "gemv" the dp4a decode GEMV and "simt" the CUDA-core
                        fallback (both timed for M <= --forced-max-m), "mma" mma.sp .s8,
                        "wgmma" sparse wgmma (sm_90)
  peers:
  tq int8 dense (same pruned weight)  torchquant's int8_matmul (auto) on the same a_q
                        and the dense int8 pruned weight: the dense counterpart of the
                        int8 2:4 rows (column "vs tq int8")
  bf16 F.linear (dense) F.linear(x, W_pruned), the dense layer with the zeros stored
  2:4 torch semi-structured  F.linear(x, torch.sparse.to_sparse_semi_structured(W_pruned)):
                        cuSPARSELt or CUTLASS, whichever torch picks (named in the note).
                        Bytes: its packed values + metadata. It pads M itself.

The weight is pruned by torchquant's prune24 (two largest magnitudes of every
4 along K) when available, else by the same rule here. Quantizing the pruned
weight keeps its zeros (symmetric: 0 -> 0), so the int8 weight is 2:4 too.
Correctness: against float64 x @ W_pruned^T (strict fp32-accumulation bound
for sparse24_gemv, relative sanity gate for the bf16 peers); the int8 rows
against the exact integer product a_q @ W_q^T scaled in float64 (int8
epilogue bound). Besides, once per shape before timing, every int8 2:4 path
this device runs must equal int8_matmul over the dense int8 weight bit for
bit (the integer part is exact): the script raises otherwise.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Iterable, List, Optional, Tuple

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common as C  # noqa: E402
from shapes import Shape  # noqa: E402

OP = "sparse24"
# CUDA paths of sparse24_gemv and sparse24_int8_matmul (csrc/sparse/sparse24.cu); "wgmma" is the
# Hopper sparse-wgmma GEMM (csrc/sparse/sparse24_gemm_sm90a.cu, sm_90 only, K % 128 == 0).
FORCED = ("fma", "mma", "wgmma")
INT8_FORCED = ("gemv", "mma", "simt", "wgmma")


def local_prune24(w: torch.Tensor) -> torch.Tensor:
    """Keep the two largest |w| of every group of 4 along K."""
    N, K = w.shape
    g = w.reshape(N, K // 4, 4)
    idx = g.abs().float().topk(2, dim=-1).indices
    mask = torch.zeros_like(g, dtype=torch.bool).scatter_(-1, idx, True)
    return (g * mask).reshape(N, K)


def semi_structured_bytes(ws: Any) -> int:
    """Bytes of one representation of a SparseSemiStructuredTensor (packed values + metadata)."""
    total = 0
    for name in ("packed", "meta"):
        t = getattr(ws, name, None)
        if isinstance(t, torch.Tensor):
            total += t.numel() * t.element_size()
    if total == 0:  # unknown layout: values + 2 bits per kept element
        N, K = ws.shape
        total = N * K // 2 * 2 + N * K // 8
    return total


# The timed calls. The path goes positionally: the schemas name it `path`.
def tq_gemv(x, values, meta, path: str = "auto"):
    return torch.ops.torchquant.sparse24_gemv(x, values, meta, None, path)


def tq_int8_sparse(a_q, a_s, values, meta, w_s, path: str = "auto"):
    return torch.ops.torchquant.sparse24_int8_matmul(a_q, a_s, None, values, meta, w_s, None, None, C.OUT_DTYPE, path)


def tq_int8_dense(a_q, a_s, w_q, w_s, path: str = "auto"):
    return torch.ops.torchquant.int8_matmul(a_q, a_s, None, w_q, w_s, None, None, C.OUT_DTYPE, path)


def peer_impl(
    name: str, peer_key: str, fn: Any, make_inputs: Any, nbytes: int, flops: float, check: Any, series: str,
    skip: str = "", note: str = "",
) -> C.Impl:
    """A peer row: its time is the denominator of the `vs <peer_key>` column."""
    return C.Impl(name=name, kind="peer", fn=fn, make_inputs=make_inputs, nbytes=nbytes, flops=flops, check=check,
                  peer_key=peer_key, series=series, skip=skip or None, note=note)


def op_why(ctx: C.Ctx, op: str) -> str:
    """Empty when torch.ops.torchquant.<op> runs on this device, else why its rows are n/a."""
    if ctx.tq is not None and C.has_op(op) and C.has_kernel(op, ctx.device):
        return ""
    return f"torch.ops.torchquant has no {ctx.device.type} {op}"


def quantize_rows(ctx: C.Ctx, t: torch.Tensor, why: str) -> Tuple[Optional[Tuple[torch.Tensor, torch.Tensor]], str]:
    """Symmetric per-row int8 (q, scale) of t by quantize_int8, or (None, why)."""
    if why:
        return None, why
    q, why = C.try_quantize(ctx, "quantize_int8", t, True, True)
    return (q[:2] if q is not None else None), why


def check_int8_exact(
    ctx: C.Ctx, where: str, x: torch.Tensor, w_q: torch.Tensor, w_s: torch.Tensor, values: torch.Tensor, meta: torch.Tensor
) -> None:
    """Every sparse24_int8_matmul path this device runs (CUDA-core paths on at most
    --forced-max-m rows of x) must equal int8_matmul over the dense int8 weight bit
    for bit: same a_q, scales and epilogue, and the integer product is exact."""
    qa, _ = quantize_rows(ctx, x, "")
    if qa is None:
        return
    a_q, a_s = qa
    P = a_q.shape[0]
    for path in ("auto",) + INT8_FORCED:
        rows = next((m for m in (P, min(P, ctx.forced_max_m)) if not C.path_skip(ctx, "sparse24_int8_matmul", path, m)), 0)
        if not rows:
            continue
        try:
            got = tq_int8_sparse(a_q[:rows], a_s[:rows], values, meta, w_s, path)
            want = tq_int8_dense(a_q[:rows], a_s[:rows], w_q, w_s)
        except Exception as e:  # the timed row runs the same call and reports it
            ctx.note_once(f"{where}: exactness check of sparse24_int8_matmul path={path} skipped: {C.first_line(e)}")
            continue
        if not torch.equal(got, want):
            diff = got.float() != want.float()
            raise RuntimeError(
                f"{OP} {where} M={rows}: sparse24_int8_matmul(path={path!r}) differs from int8_matmul over the "
                f"same pruned int8 weight at {int(diff.sum())} of {diff.numel()} outputs (max |diff| "
                f"{float((got.float() - want.float()).abs().max()):.4g}); the integer product must be exact"
            )


def make_cases(ctx: C.Ctx, shape_list: List[Shape], ms: Tuple[int, ...]) -> Iterable[C.Case]:
    dev = ctx.device
    bf16 = C.OUT_DTYPE
    gen = torch.Generator(device=dev)
    gemv_why = op_why(ctx, "sparse24_gemv")
    if gemv_why:
        ctx.note_once(f"{gemv_why}: only torch's semi-structured path vs dense is measured")
    sp8_why, dense8_why = op_why(ctx, "sparse24_int8_matmul"), op_why(ctx, "int8_matmul")
    if sp8_why:
        ctx.note_once(f"{sp8_why}: the int8 2:4 rows are n/a")
    semi_skip = ""
    if not ctx.on_gpu:
        semi_skip = "torch semi-structured sparsity is CUDA-only"
    elif torch.cuda.get_device_capability(dev) < (8, 0):
        semi_skip = "semi-structured sparsity needs sm_80+"
    for shape in shape_list:
        N, K = shape.N, shape.K
        gen.manual_seed(4000 + N + 7 * K)
        w = torch.randn(N, K, device=dev, dtype=bf16, generator=gen)
        q, _ = C.try_quantize(ctx, "prune24", w)
        wp = q[0] if q is not None else local_prune24(w)
        del w, q
        values = meta = None
        why = gemv_why
        if not why:
            q, why = C.try_quantize(ctx, "compress24", wp)
            values, meta = q if q is not None else (None, None)

        # int8: the pruned weight quantized per channel (still 2:4), dense and compressed.
        wq8, int8_why = quantize_rows(ctx, wp, sp8_why if (sp8_why and dense8_why) else "")
        w_q, w_s = wq8 if wq8 is not None else (None, None)
        values8 = meta8 = None
        sp8_shape_why = sp8_why or int8_why
        if not sp8_shape_why:
            q, sp8_shape_why = C.try_quantize(ctx, "compress24", w_q)
            values8, meta8 = q if q is not None else (None, None)
        if not (sp8_shape_why or dense8_why):
            probe = torch.Generator(device=dev)
            probe.manual_seed(5000 + N + 7 * K)
            x_probe = torch.randn(max(ms), K, device=dev, dtype=bf16, generator=probe)
            check_int8_exact(ctx, shape.nk, x_probe, w_q, w_s, values8, meta8)
            del x_probe

        # One semi-structured copy per rotation index, built on demand and kept for the shape.
        semi_copies: dict = {}
        semi_err = ""
        if not semi_skip:
            try:
                semi_copies[0] = torch.sparse.to_sparse_semi_structured(wp)
            except Exception as e:
                semi_err = "to_sparse_semi_structured: " + C.first_line(e)
        semi_name = type(semi_copies[0]).__name__ if 0 in semi_copies else ""

        def semi(i: int, wp=wp, semi_copies=semi_copies) -> Any:
            if i not in semi_copies:
                semi_copies[i] = torch.sparse.to_sparse_semi_structured(wp.clone())
            return semi_copies[i]

        def deq_rows(n0, n1, wp=wp):
            return wp[n0:n1].to(torch.float64)

        for M in ms:
            x = torch.randn(M, K, device=dev, dtype=bf16, generator=gen)
            flops = 2.0 * M * N * K
            out_bytes = M * N * 2
            lazies: List[C.Lazy] = []
            chk_tq, lz = C.float_check(x, deq_rows, N, bf16)
            lazies.append(lz)
            impls = C.path_impls(
                ctx, "sparse24_gemv", M, why, FORCED, tq_gemv, (x, values, meta),
                C.nbytes(x, values, meta) + out_bytes, flops, chk_tq, "2:4 torchquant",
            )

            qa, a_why = quantize_rows(ctx, x, int8_why or ("" if wq8 is not None else "no int8 weight"))
            a_q, a_s = qa if qa is not None else (None, None)
            chk_q = None
            if qa is not None:
                chk_q, lz = C.int8_check(a_q, a_s, w_q, w_s, bf16)
                lazies.append(lz)
            impls += C.path_impls(
                ctx, "sparse24_int8_matmul", M, sp8_shape_why or a_why, INT8_FORCED,
                tq_int8_sparse, (a_q, a_s, values8, meta8, w_s),
                C.nbytes(a_q, a_s, values8, meta8, w_s) + out_bytes, flops, chk_q, "2:4 int8 torchquant",
                label="tq int8 2:4",
            )
            impls.append(peer_impl(
                "tq int8 dense (same pruned weight)", "tq_int8", tq_int8_dense, C.rotating((a_q, a_s, w_q, w_s)),
                C.nbytes(a_q, a_s, w_q, w_s) + out_bytes, flops, chk_q, "int8 torchquant",
                skip=dense8_why or int8_why or a_why,
                note="torchquant int8_matmul auto: the dense counterpart of the int8 2:4 rows",
            ))

            chk_peer, lz = C.rel_check(lambda x=x: C.linear64_rows(x, deq_rows, N))
            lazies.append(lz)
            impls.append(peer_impl(
                "bf16 F.linear (dense)", "bf16", F.linear, C.rotating((x, wp)),
                C.nbytes(x, wp) + out_bytes, flops, chk_peer, "bf16 F.linear",
            ))

            def semi_inputs(i: int, x=x) -> Tuple[Any, ...]:
                return (x if i == 0 else x.clone(), semi(i))

            sbytes = semi_structured_bytes(semi_copies[0]) if 0 in semi_copies else 0
            impls.append(peer_impl(
                "2:4 torch semi-structured", "semi24", F.linear, semi_inputs,
                C.nbytes(x) + sbytes + out_bytes, flops, chk_peer, "2:4 torch semi-structured (bf16)",
                skip=semi_skip or semi_err, note=semi_name,
            ))
            yield C.Case(shape, M, impls, cleanup=lazies)
            del x, a_q, a_s, qa, impls
        semi_copies.clear()
        del wp, values, meta, w_q, w_s, wq8, values8, meta8
        if dev.type == "cuda":
            torch.cuda.empty_cache()


def main(argv=None) -> int:
    return C.bench_main(OP, make_cases, argv)


if __name__ == "__main__":
    sys.exit(main())
