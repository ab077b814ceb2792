#!/usr/bin/env bash
# Session 2026-12-02j call 3: the cluster K split in the automatic rule: tests, memcheck, int8 sweep.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
export TORCHQUANT_COMMIT=${TORCHQUANT_COMMIT:-unknown}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  $PY setup.py build_ext --inplace > "$R/build.log" 2>&1; echo "build rc=$? $(( $(date +%s) - t0 )) s"
grep -E "error" "$R/build.log" | head -5
t0=$(date +%s)
timeout -k 10 200 $PY -m pytest -q --timeout=150 -p no:cacheprovider -n 16 tests/test_int8_wgmma_cuda.py \
  tests/test_int8_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -20; tail -n 2 "$R/tests.log"
t0=$(date +%s)
timeout -k 10 120 compute-sanitizer --tool memcheck --error-exitcode 9 $PY -m pytest -q -p no:cacheprovider \
  tests/test_int8_wgmma_cuda.py -k "auto_tile_rule or auto_split or cluster_ksplit_cuda_graph" > "$R/memcheck.log" 2>&1
echo "memcheck rc=$? (9 = errors, 124 = time limit) $(( $(date +%s) - t0 )) s"; grep -E "ERROR SUMMARY|passed|failed" "$R/memcheck.log" | tail -3
t0=$(date +%s)
PYTHONPATH=. timeout 200 $PY benchmarks/bench_int8.py --full --ms 33,64,128,256 --forced-max-m 0 --out "$R/bench_int8" > "$R/bench_int8.log" 2>&1
echo "bench_int8 rc=$? $(( $(date +%s) - t0 )) s"
$PY - "$R/bench_int8/int8.csv" <<'PY'
import csv, sys, collections
t = collections.defaultdict(dict)
for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")):
    t[(r["N"], r["K"], r["M"])][r["impl"]] = r["time_us"]
print("int8 sweep, us: tq auto | bf16 F.linear | torch._int_mm+scale")
for (n, k, m), d in t.items():
    a, b = d.get("tq auto", ""), d.get("bf16 F.linear", "")
    flag = " SLOWER" if a and b and float(a) > float(b) else ""
    print(f"{n}x{k} M={m}: {a} | {b} | {d.get('torch._int_mm+scale', '')}{flag}")
PY
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
