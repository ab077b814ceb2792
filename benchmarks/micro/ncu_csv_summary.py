"""Per-kernel means of the metrics in an `ncu --csv` log (the ==PROF== lines and the program's
own output are skipped): kernel name (first 60 characters), launches, then metric = mean.

python benchmarks/micro/ncu_csv_summary.py ncu.log [label]
"""
import collections
import csv
import sys

path = sys.argv[1]
label = sys.argv[2] if len(sys.argv) > 2 else path
lines = [ln for ln in open(path, errors="replace") if ln.startswith('"')]
vals = collections.defaultdict(lambda: collections.defaultdict(list))
ids = collections.defaultdict(set)
for row in csv.DictReader(lines):
    try:
        v = float(row["Metric Value"].replace(",", ""))
    except (KeyError, ValueError):
        continue
    name = row["Kernel Name"][:60]
    ids[name].add(row["ID"])
    vals[name][f'{row["Metric Name"]} ({row["Metric Unit"]})'].append(v)
for name, ms in vals.items():
    cells = ", ".join(f"{m} = {sum(v) / len(v):.4g}" for m, v in sorted(ms.items()))
    print(f"{label}: {name}: {len(ids[name])} launches: {cells}")
