"""2:4 structured sparsity: torch's semi-structured sparse GEMM (and
torchquant's own sparse24_gemv where torch.ops.torchquant has one) against
the dense bf16 layer over the same pruned weight.

Rows per (shape, M):
  tq auto / fma / mma   torchquant's sparse24_gemv(x, values, meta[, kernel=...]) over
                        compress24's layout, only if hasattr(torch.ops.torchquant,
                        "sparse24_gemv") (otherwise the rows say n/a); "fma" is the
                        CUDA-core decode path, timed for M <= --forced-max-m
  peers:
  bf16 F.linear (dense) F.linear(x, W_pruned), the dense layer with the zeros stored
  2:4 torch semi-structured  F.linear(x, torch.sparse.to_sparse_semi_structured(W_pruned)):
                        cuSPARSELt or CUTLASS, whichever torch picks (named in the note).
                        Bytes: its packed values + metadata. It pads M itself.

The weight is pruned by torchquant's prune24 (two largest magnitudes of every
4 along K) when available, else by the same rule here. Correctness: against
float64 x @ W_pruned^T (strict fp32-accumulation bound for torchquant,
relative sanity gate for the peers).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Iterable, List, Tuple

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common as C  # noqa: E402
from shapes import Shape  # noqa: E402

OP = "sparse24"
FORCED = ("fma", "mma")  # CUDA paths of sparse24_gemv (csrc/sparse/sparse24.cu)
DECODE_ONLY = ("fma",)


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


def make_cases(ctx: C.Ctx, shape_list: List[Shape], ms: Tuple[int, ...]) -> Iterable[C.Case]:
    dev = ctx.device
    bf16 = C.OUT_DTYPE
    gen = torch.Generator(device=dev)
    has_tq_sparse = ctx.tq is not None and C.has_op("sparse24_gemv") and C.has_kernel("sparse24_gemv", dev)
    if not has_tq_sparse:
        ctx.note_once(f"torch.ops.torchquant has no {dev.type} sparse24_gemv: only torch's semi-structured path vs dense is measured")
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
        why = "" if has_tq_sparse else f"torch.ops.torchquant has no {dev.type} sparse24_gemv"
        if has_tq_sparse:
            q, why = C.try_quantize(ctx, "compress24", wp)
            values, meta = q if q is not None else (None, None)

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
            lazies: List[C.Lazy] = []
            impls: List[C.Impl] = []
            chk_tq, lz = C.float_check(x, deq_rows, N, bf16)
            lazies.append(lz)
            for kernel in ("auto",) + FORCED:
                skip = why
                if not skip and kernel != "auto" and not ctx.on_gpu:
                    skip = "CUDA-only path"
                elif not skip and kernel in DECODE_ONLY and M > ctx.forced_max_m:
                    skip = f"decode-only path, timed for M <= {ctx.forced_max_m}"
                impls.append(
                    C.Impl(
                        name="tq auto" if kernel == "auto" else f"tq {kernel}",
                        kind="torchquant",
                        fn=(lambda x, v, m: torch.ops.torchquant.sparse24_gemv(x, v, m)) if kernel == "auto"
                        else (lambda x, v, m, kernel=kernel: torch.ops.torchquant.sparse24_gemv(x, v, m, kernel=kernel)),
                        make_inputs=C.rotating((x, values, meta)),
                        nbytes=C.nbytes(x, values, meta) + M * N * 2,
                        flops=flops,
                        check=chk_tq,
                        series="2:4 torchquant" if kernel == "auto" else None,
                        skip=skip or None,
                    )
                )
            chk_peer, lz = C.rel_check(lambda x=x: C.linear64_rows(x, deq_rows, N))
            lazies.append(lz)
            impls.append(
                C.Impl(
                    name="bf16 F.linear (dense)",
                    kind="peer",
                    fn=F.linear,
                    make_inputs=C.rotating((x, wp)),
                    nbytes=C.nbytes(x, wp) + M * N * 2,
                    flops=flops,
                    check=chk_peer,
                    peer_key="bf16",
                    series="bf16 F.linear",
                )
            )

            def semi_inputs(i: int, x=x) -> Tuple[Any, ...]:
                return (x if i == 0 else x.clone(), semi(i))

            sbytes = semi_structured_bytes(semi_copies[0]) if 0 in semi_copies else 0
            impls.append(
                C.Impl(
                    name="2:4 torch semi-structured",
                    kind="peer",
                    fn=F.linear,
                    make_inputs=semi_inputs,
                    nbytes=C.nbytes(x) + sbytes + M * N * 2,
                    flops=flops,
                    check=chk_peer,
                    peer_key="semi24",
                    series="2:4 torch semi-structured (bf16)",
                    skip=(semi_skip or semi_err) or None,
                    note=semi_name,
                )
            )
            yield C.Case(shape, M, impls, cleanup=lazies)
            del x, impls
        semi_copies.clear()
        del wp, values, meta
        if dev.type == "cuda":
            torch.cuda.empty_cache()


def main(argv=None) -> int:
    return C.bench_main(OP, make_cases, argv)


if __name__ == "__main__":
    sys.exit(main())
