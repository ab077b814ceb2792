#!/usr/bin/env bash
# Session 2026-12-02i call 2: the int8 64-row tile rule (tests, full int8 sweep at M = 33..256),
# fp8 fma vs mma at M = 1 on every model shape, the x-through-ring tests and XR's layer chain
# with PDL off and on.
set -uo pipefail
OUT=${1:?}
mkdir -p "$OUT/r"
R=$OUT/r
. benchmarks/device_env.sh 16
export TORCHQUANT_COMMIT=${TORCHQUANT_COMMIT:-unknown}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  $PY setup.py build_ext --inplace > "$R/build.log" 2>&1; echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout -k 10 200 $PY -m pytest -q --timeout=120 -p no:cacheprovider -n 16 tests/test_int8_wgmma_cuda.py \
  tests/test_int8_cuda.py "tests/test_fp8_cuda.py::test_gemv_ring_x_through_ring" > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -20; tail -n 2 "$R/tests.log"
t0=$(date +%s)
PYTHONPATH=. timeout 240 $PY benchmarks/bench_int8.py --full --ms 33,64,128,256 --forced-max-m 0 --out "$R/bench_int8" > "$R/bench_int8.log" 2>&1
echo "bench_int8 rc=$? $(( $(date +%s) - t0 )) s"
$PY - "$R/bench_int8/int8.csv" <<'PY'
import csv, sys, collections
t = collections.defaultdict(dict)
for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")):
    t[(r["N"], r["K"], r["M"])][r["impl"]] = r["time_us"]
print("int8 sweep, us: tq auto | bf16 F.linear | _int_mm+scale")
for (n, k, m), d in t.items():
    a, b = d.get("tq auto", ""), d.get("bf16 F.linear", "")
    flag = " SLOWER" if a and b and float(a) > float(b) else ""
    print(f"{n}x{k} M={m}: {a} | {b} | {d.get('_int_mm+scale', '')}{flag}")
PY
SH=4096x4096,1024x4096,6144x4096,14336x4096,28672x4096,4096x14336,8192x8192,1024x8192,10240x8192,28672x8192,57344x8192,8192x28672,768x2048,1536x2048,2048x768,128256x4096
t0=$(date +%s)
for p in fma mma; do
  PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op fp8 --path $p --var TORCHQUANT_FP8_KSPLIT --values auto \
    --shapes $SH --ms 1 --out "$R/fp8_m1_$p.csv" > "$R/fp8_m1_$p.log" 2>&1
done
echo "fp8 M=1 fma/mma rc=$? $(( $(date +%s) - t0 )) s"
paste -d' ' <(grep "^fp8 " "$R/fp8_m1_fma.log" | sed 's/auto:/fma:/') <(grep "^fp8 " "$R/fp8_m1_mma.log" | sed 's/.*auto:/mma:/')
t0=$(date +%s)
PYTHONPATH=. timeout 100 $PY benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,8 --env TORCHQUANT_PDL=0 \
  --var TORCHQUANT_FP8_XRING --modes=-1,1 --out "$R/pdl0_xr.csv" > "$R/pdl0_xr.log" 2>&1
PYTHONPATH=. timeout 100 $PY benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,8 \
  --var TORCHQUANT_FP8_XRING --modes=-1,1 --out "$R/pdl_xr.csv" > "$R/pdl_xr.log" 2>&1
echo "pdl_ab XR rc=$? $(( $(date +%s) - t0 )) s"; grep -v "^#" "$R/pdl0_xr.log" | tail -8; grep -v "^#" "$R/pdl_xr.log" | tail -8
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
