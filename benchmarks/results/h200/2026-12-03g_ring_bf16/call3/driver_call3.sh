#!/usr/bin/env bash
# Session 2026-12-03g call 3: full sm_90 build of main (int8 2:4 auto from M = 4 on K-split
# grids), then (1) the 2:4 wgmma tests (the new rule) and the fp8 tests with the wgmma GEMV's,
# (2) int8 2:4 auto at M = 3..8 on the small layers, (3) the Llama-3-8B layer table (bench_e2e,
# every format, 7 projections and fused) at M = 1 and 8.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
export TORCHQUANT_COMMIT=${COMMIT:-unknown}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
timeout 330 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout -k 5 150 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_sparse24_wgmma_cuda.py tests/test_fp8_cuda.py tests/test_fp8_wgmma_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
PYTHONPATH=. timeout 40 $PY benchmarks/micro/env_ab.py --op sparse24_int8 --var path --values auto,wgmma,gemv --shapes 4096x4096,4096x14336,1024x4096 --ms 3,4,6,8 --out "$R/i8_auto.csv" > "$R/i8_auto.log" 2>&1
echo "i8_auto rc=$?"; grep "M=" "$R/i8_auto.log"
t0=$(date +%s)
PYTHONPATH=. timeout 170 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_m1_8" > "$R/e2e_m1_8.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"
$PY - "$R/e2e_m1_8/e2e.csv" <<'PY'
import csv, sys
for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")):
    if "fused" in r["model"] or "QuantLinear" in r["impl"] or "bf16" in r["impl"]:
        print(f"{r['model'][:18]:18s} M={r['M']:>4s} {r['impl'][:28]:28s} {r['time_us']:>9s} vs_bf16={r['vs_bf16']:>6s} {r['check']}")
PY
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
