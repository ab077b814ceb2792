#!/usr/bin/env bash
# Session 2026-12-03 call 4: the whole GPU suite on the session's final kernels (gpu_job.sh:
# full sm_90 build, smoke, tests, ring memcheck, memcheck of the 16-byte-store tests), then the
# int8 sweep at every M and the int8 2:4 table on 28672x8192.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
TORCHQUANT_COMMIT=${COMMIT:-unknown} PYTEST_WORKERS=16 TEST_TIMEOUT=300 EXTRA_PY_TAIL=4 \
  EXTRA_PY="memcheck:benchmarks/micro/ring_memcheck.py;memcheck:-m pytest -q -p no:cacheprovider tests/test_int8_wgmma_cuda.py tests/test_sparse24_wgmma_cuda.py tests/test_fp8_wgmma_cuda.py tests/test_nvfp4_wgmma_cuda.py -k 'vec or identity'" \
  timeout 420 bash benchmarks/gpu_job.sh "$R" --no-bench
echo "gpu_job rc=$?"
grep -E "passed|failed" "$R/tests.log" | tail -2
. benchmarks/device_env.sh 16
export TORCHQUANT_COMMIT=${COMMIT:-unknown}
t0=$(date +%s)
PYTHONPATH=. timeout 120 $PY benchmarks/bench_int8.py --full --forced-max-m 0 --out "$R/bench_int8" > "$R/bench_int8.log" 2>&1
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
t0=$(date +%s)
PYTHONPATH=. timeout 90 $PY benchmarks/bench_sparse24.py --shapes 28672x8192 --ms 1,2048 --forced-max-m 0 \
  --out "$R/bench_sparse24" > "$R/bench_sparse24.log" 2>&1
echo "bench_sparse24 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "M=2048|M=1 " "$R/bench_sparse24.log" | head -20
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
