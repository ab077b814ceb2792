#!/usr/bin/env bash
# Session 2026-12-02j call 5: the int8 sweep at every M of the benchmark (final code), and forced
# tiles at M = 512..2048 on the small expert shapes that still lose to bf16 at M = 2048.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
export TORCHQUANT_COMMIT=${TORCHQUANT_COMMIT:-unknown}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  $PY setup.py build_ext --inplace > "$R/build.log" 2>&1; echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op int8 --path wgmma --var TORCHQUANT_INT8_WGMMA_TILE \
  --values auto,128x128c1,128x256c1,128x256c2,64x128c1,64x64c1 --shapes 768x2048,1536x2048,2048x768,2048x2048,1024x4096 \
  --ms 512,1024,2048 --dense --out "$R/tiles_ab.csv" > "$R/tiles_ab.log" 2>&1
echo "tiles ab rc=$? $(( $(date +%s) - t0 )) s"; tail -n 15 "$R/tiles_ab.log"
t0=$(date +%s)
PYTHONPATH=. timeout 240 $PY benchmarks/bench_int8.py --full --forced-max-m 0 --out "$R/bench_int8" > "$R/bench_int8.log" 2>&1
echo "bench_int8 rc=$? $(( $(date +%s) - t0 )) s"
$PY - "$R/bench_int8/int8.csv" <<'PY'
import csv, sys, collections
t = collections.defaultdict(dict)
for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")):
    t[(r["N"], r["K"])][(int(r["M"]), r["impl"])] = r["time_us"]
print("int8 sweep, us per M: tq auto/bf16 (! = tq slower)")
for (n, k), d in t.items():
    ms = sorted({m for m, _ in d})
    cells = []
    for m in ms:
        a, b = d.get((m, "tq auto")), d.get((m, "bf16 F.linear"))
        if a is None: continue
        cells.append(f"{m}:{float(a):.1f}/{float(b):.1f}{'!' if b and float(a) > float(b) else ''}")
    print(f"{n}x{k} " + " ".join(cells))
PY
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
