"""Summarize an ab_builds.sh log: one line per (command, op, shape, M) with every round's A and B
times side by side (the lines env_ab.py and pdl_ab.py print, prefixed A1, B1, A2, ...).

  python benchmarks/micro/ab_summary.py OUT/ab.log
"""
from __future__ import annotations

import collections
import re
import sys


def main() -> None:
    rows: dict[str, dict[str, list[str]]] = collections.OrderedDict()
    seen: collections.Counter = collections.Counter()
    for line in open(sys.argv[1]):
        m = re.match(r"([AB])(\d+) (\S+) (\d+x\d+) (M=\d+): (.*)", line)
        if m:
            key = f"{m.group(3)} {m.group(4)} {m.group(5)}"
            vals = " ".join(v.split(":")[-1] for v in m.group(6).split())
        else:
            m = re.match(r"([AB])(\d+) fused layer (\S+) (\S+) (M=\d+): (.*)", line)
            if not m:
                continue
            key = f"layer {m.group(3)} {m.group(4)} {m.group(5)}"
            vals = m.group(6).split("|")[0].split(":")[-1].strip()
        # The same key printed again in one round is a later command (e.g. another dtype).
        tag = f"{m.group(1)}{m.group(2)}"
        seen[(tag, key)] += 1
        k = f"{key} #{seen[(tag, key)]}"
        rows.setdefault(k, collections.defaultdict(list))[m.group(1)].append(vals)
    for k, v in rows.items():
        print(f"{k:34s} A {', '.join(v['A']):20s} B {', '.join(v['B'])}")


if __name__ == "__main__":
    main()
