"""Search for nvfp4 word layouts that make the GEMV's decode cheap (csrc/nvfp4/nvfp4_layout.h,
docs/nvfp4_gemv.md 23). No GPU; about a minute per target.

A 32-bit word holds 8 codes. The bf16 decode must produce four pair registers whose set bits
lie on P = {6, 7, 8, 15, 22, 23, 24, 31} (magnitude and sign of two bf16 halves); the fp16
decode on {9, 10, 11, 15, 25, 26, 27, 31}. A layout is a bit permutation of the word; each pair
register is `mover(w) & P`, and the four movers' preimages of P must partition the 32 bits.
Movers and their cost in issue slots (integer ALU / FMA-pipe IMAD):
  id            w & P                              1 ALU
  shl s         (w << s) & P  (IMAD.SHL)           1 ALU + 1 IMAD   (no bit of P lost)
  rotl s        rotl(w, s) & P  (SHF.L.W)          2 ALU
  mm A          ((w & R) * sum 2^a) & P            2 ALU + 1 IMAD   (copies of R disjoint: no
                                                                     carries; each bit of P
                                                                     fed by one bit of R)
Four outputs cost at least one ALU op each, so a layout under 7 ALU ops needs two outputs of
cost 1 (id or shl). The search tries every pair of those with every pair of other movers; for
the record it also lists the id + two rotations + mm layouts (7 ALU, the one layout 1 uses).

python benchmarks/micro/nvfp4_layout_search.py [--target bf16|fp16]
"""
from __future__ import annotations

import argparse
import itertools

TARGETS = {"bf16": (6, 7, 8, 15, 22, 23, 24, 31), "fp16": (9, 10, 11, 15, 25, 26, 27, 31)}
ALL = frozenset(range(32))


def masked_multiplies(P, max_terms=3):
    """Every R (8 source bits) such that ((w & R) * sum_a 2^a) & P gathers R onto P one to one
    with no carries; R -> the first multiplier found."""
    P = sorted(P)
    found = {}
    for k in range(1, max_terms + 1):
        for A in itertools.combinations(range(32), k):
            for choice in itertools.product(A, repeat=8):
                src = [p - a for p, a in zip(P, choice)]
                if min(src) < 0 or len(set(src)) != 8:
                    continue
                R = frozenset(src)
                if R in found:
                    continue
                copies, ok = set(), True
                for a in A:  # the copies R + a must not overlap (no carries)
                    c = {r + a for r in R if r + a < 32}
                    if c & copies:
                        ok = False
                        break
                    copies |= c
                if not ok:
                    continue
                hits = {}
                for a in A:
                    for r in R:
                        if r + a in P:
                            hits.setdefault(r + a, []).append(r)
                if sorted(hits) == P and all(hits[p] == [p - a] for p, a in zip(P, choice)):
                    found[R] = A
    return found


def search(P):
    P = frozenset(P)
    cheap = [("id", 0, P, (1, 0))]
    cheap += [("shl", s, frozenset(p - s for p in P), (1, 1)) for s in range(1, 32) if min(P) - s >= 0]
    other = cheap[1:] + [("rotl", s, frozenset((p - s) % 32 for p in P), (2, 0)) for s in range(1, 32)]
    other += [("mm", A, R, (2, 1)) for R, A in masked_multiplies(P).items()]
    under7 = []
    for c1, c2 in itertools.combinations(cheap, 2):
        if c1[2] & c2[2]:
            continue
        left = ALL - c1[2] - c2[2]
        fits = {o[2]: o for o in other if o[2] <= left}
        for o in fits.values():
            rest = fits.get(left - o[2])
            if rest is not None and o[:2] <= rest[:2]:
                outs = (c1, c2, o, rest)
                under7.append((tuple(sum(x[3][i] for x in outs) for i in (0, 1)), [x[:2] for x in outs]))
    seven = []
    rots = [o for o in other if o[0] == "rotl"]
    mms = {o[2]: o for o in other if o[0] == "mm"}
    for r1, r2 in itertools.combinations(rots, 2):
        if P & r1[2] or P & r2[2] or r1[2] & r2[2]:
            continue
        m = mms.get(ALL - P - r1[2] - r2[2])
        if m is not None:
            seven.append(((7, 1), [("id", 0), r1[:2], r2[:2], m[:2]]))
    return sorted(under7), seven


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=sorted(TARGETS), default="bf16")
    args = ap.parse_args()
    under7, seven = search(TARGETS[args.target])
    print(f"{args.target}: layouts with two cost-1 outputs (ALU, IMAD per word): {len(under7)}")
    for cost, outs in under7[:10]:
        print(f"  {cost}: {outs}")
    print(f"{args.target}: id + two rotations + a masked multiply (7 ALU, 1 IMAD): {len(seven)}")
    for cost, outs in seven[:10]:
        print(f"  {cost}: {outs}")


if __name__ == "__main__":
    main()
