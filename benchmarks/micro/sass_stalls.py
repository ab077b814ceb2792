"""Summarise an Nsight Compute source-page CSV (--page source --print-source sass --csv):
stall samples per reason over the kernel, per opcode, and the instructions with the most
samples. The column names differ between ncu versions, so every column whose name
mentions a stall or sampling is taken as a per-instruction sample count.

python sass_stalls.py NAME.sass.csv [NAME.details.txt]
"""
import collections
import csv
import re
import sys


def num(s):
    try:
        return float(str(s).replace(",", ""))
    except ValueError:
        return 0.0


def main(path, details=None):
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"') and "Source" in l), None)
    if start is None:
        print("no source table found; first lines:")
        print("\n".join(lines[:20]))
        return
    rows = list(csv.DictReader(lines[start:]))
    cols = list(rows[0].keys()) if rows else []
    print("columns:", cols)
    samp = [c for c in cols if re.search(r"stall|sampl", c, re.I)]
    total_col = next((c for c in samp if re.search(r"all samples", c, re.I)), samp[0] if samp else None)
    # the per-reason columns (stall_*), not the totals or their not-issued twins
    reasons = [c for c in samp if c.startswith("stall_") and not re.search(r"not.issued", c, re.I)]
    tot = collections.Counter()
    for r in rows:
        for c in samp:
            tot[c] += num(r.get(c, 0))
    print(f"\n{len(rows)} SASS lines; sample totals per column:")
    for c, v in tot.most_common():
        print(f"  {v:12.0f}  {c}")
    by_op = collections.Counter()
    n_op = collections.Counter()
    exe_col = next((c for c in cols if re.search(r"instructions executed", c, re.I)), None)
    for r in rows:
        src = r.get("Source", "").strip()
        op = re.sub(r"^@!?U?P\w+\s+", "", src).split(" ")[0] if src else "?"
        by_op[op] += num(r.get(total_col, 0)) if total_col else 0
        if exe_col:
            n_op[op] += num(r.get(exe_col, 0))
    print(f"\nsamples ({total_col}) per opcode, with warp-level instructions executed:")
    for op, v in by_op.most_common(30):
        print(f"  {v:10.0f}  {n_op[op]:14.0f}  {op}")
    if total_col:
        print("\ntop 50 instructions by samples (address, samples, top reasons, source):")
        top = sorted(rows, key=lambda r: -num(r.get(total_col, 0)))[:50]
        for r in top:
            rs = sorted(((num(r.get(c, 0)), c) for c in reasons), reverse=True)[:3]
            why = ", ".join(f"{c.split('(')[0].strip()[-28:]}={v:.0f}" for v, c in rs if v > 0)
            print(f"  {r.get('Address', ''):>8} {num(r.get(total_col, 0)):8.0f}  [{why}]  {r.get('Source', '').strip()[:70]}")
    if details:
        print("\nstall lines of the details page:")
        with open(details) as f:
            for l in f:
                if re.search(r"stall|Stall", l):
                    print(" ", l.rstrip()[:150])


if __name__ == "__main__":
    main(*sys.argv[1:3])
