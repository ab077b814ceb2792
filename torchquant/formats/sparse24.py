"""2:4 structured sparsity along K: prune, compress, decompress (pure torch).

Groups are 4 consecutive elements of a row. prune24 keeps the two largest
magnitudes (ties keep the lower index). The compressed form is the kept
values [N, K/2] plus a nibble per group: positions p0 < p1 in bits 0-1 and
2-3; group 2j in the low nibble of byte j of meta [N, ceil(K/8)]. A group
with fewer than two nonzeros keeps its lowest zero positions.
"""

from typing import Tuple

import torch

from torchquant.formats._common import check_finite

_DTYPES = (torch.int8, torch.float16, torch.bfloat16, torch.float32)


def _check(w: torch.Tensor, op: str) -> None:
    if w.dim() != 2:
        raise ValueError(f"{op}: w must be 2-D, got shape {tuple(w.shape)}")
    if w.dtype not in _DTYPES:
        raise TypeError(f"{op}: w must be int8, float16, bfloat16 or float32, got {w.dtype}")
    if w.shape[1] % 4:
        raise ValueError(f"{op}: K must be a multiple of 4, got {w.shape[1]}")


def _keep_positions(score: torch.Tensor) -> torch.Tensor:
    """[N, G, 4] scores -> [N, G, 2] sorted kept positions (largest, ties lower index)."""
    order = torch.argsort(-score, dim=-1, stable=True)
    return order[..., :2].sort(dim=-1).values


def prune24(w: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    _check(w, "prune24")
    if w.is_floating_point():
        check_finite(w, "prune24", "w")
    N, K = w.shape
    mag = w.view(N, K // 4, 4).abs().to(torch.float64)
    keep = _keep_positions(mag)
    mask = torch.zeros(N, K // 4, 4, dtype=torch.bool, device=w.device)
    mask.scatter_(2, keep, True)
    mask = mask.view(N, K)
    return torch.where(mask, w, torch.zeros_like(w)), mask


def compress24(w: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    _check(w, "compress24")
    N, K = w.shape
    g = w.view(N, K // 4, 4)
    nz = g != 0
    counts = nz.sum(-1)
    if bool((counts > 2).any()):
        row, grp = (counts > 2).nonzero()[0].tolist()
        raise ValueError(
            f"compress24: row {row}, group {grp} (k = {4 * grp}..{4 * grp + 3}) has {int(counts[row, grp])} "
            "nonzeros; a 2:4 tensor has at most 2 per group of 4 (run prune24 first)"
        )
    # Nonzeros first, then the lowest zero positions: a stable sort on "is zero".
    keep = _keep_positions(nz.to(torch.int8))
    values = torch.gather(g, 2, keep).reshape(N, K // 2)
    nib = (keep[..., 0] | (keep[..., 1] << 2)).to(torch.uint8)  # [N, G]
    G = K // 4
    if G % 2:
        nib = torch.nn.functional.pad(nib, (0, 1))
    meta = nib[:, 0::2] | (nib[:, 1::2] << 4)
    return values.contiguous(), meta.contiguous()


def decompress24(values: torch.Tensor, meta: torch.Tensor) -> torch.Tensor:
    N, Kh = values.shape
    K = Kh * 2
    G = K // 4
    nib = torch.stack((meta & 0x0F, meta >> 4), dim=-1).reshape(N, -1)[:, :G]
    p0 = (nib & 0x3).long()
    p1 = (nib >> 2).long()
    if bool((p0 >= p1).any()):
        raise ValueError("decompress24: a meta nibble has its first position >= its second")
    out = torch.zeros(N, G, 4, dtype=values.dtype, device=values.device)
    v = values.view(N, G, 2)
    out.scatter_(2, torch.stack((p0, p1), -1), v)
    return out.view(N, K)
