#!/usr/bin/env bash
# Session 2026-12-02i call 1: A = this tree (int8 64-row wgmma tiles; fp8 as main),
# B = fp8 x-late (ab_old/csrc/fp8/fp8_kernels.cuh over this tree).
set -uo pipefail
OUT=${1:?}
mkdir -p "$OUT"
. benchmarks/device_env.sh 8
export TORCHQUANT_COMMIT=${TORCHQUANT_COMMIT:-unknown}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/env.txt"
B=$(mktemp -d)
cp -r setup.py pyproject.toml csrc torchquant benchmarks tests "$B"/
cp ab_old/csrc/fp8/fp8_kernels.cuh "$B/csrc/fp8/fp8_kernels.cuh"
t0=$(date +%s)
(TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  $PY setup.py build_ext --inplace > "$OUT/build_A.log" 2>&1; echo "build A rc=$? $(( $(date +%s) - t0 )) s") &
(cd "$B" && TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu $PY setup.py build_ext --inplace > "$OUT/build_B.log" 2>&1; echo "build B rc=$? $(( $(date +%s) - t0 )) s")
wait
grep -h "C75\|warning" "$OUT"/build_*.log | head
t0=$(date +%s)
timeout -k 10 150 $PY -m pytest -q -x --timeout=60 -p no:cacheprovider -n 16 tests/test_int8_wgmma_cuda.py > "$OUT/int8_tests.log" 2>&1
echo "int8 wgmma tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 4 "$OUT/int8_tests.log"
t0=$(date +%s)
PYTHONPATH=. timeout 200 $PY benchmarks/micro/env_ab.py --op int8 --path wgmma --var TORCHQUANT_INT8_WGMMA_TILE \
  --values auto,64x128c1,64x64c1 --shapes 4096x4096,1024x4096,6144x4096,4096x14336,14336x4096 --ms 33,64,96,128 --dense \
  --out "$OUT/i8tile.csv" > "$OUT/i8tile.log" 2>&1
echo "int8 tile sweep rc=$? $(( $(date +%s) - t0 )) s"; grep -v "^#" "$OUT/i8tile.log" | tail -n 50
for r in 1 2; do
  for v in A B; do
    d=$PWD; [ $v = B ] && d=$B
    t0=$(date +%s)
    (cd "$d" && PYTHONPATH=. timeout 100 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_XRING --values=-1 \
      --shapes 28672x8192,128256x4096,4096x4096,14336x4096,6144x4096 --ms 1,2,4,8 --out "$OUT/fp8_$v$r.csv" > "$OUT/fp8_$v$r.log" 2>&1)
    echo "fp8 $v$r rc=$? $(( $(date +%s) - t0 )) s"
  done
done
$PY - "$OUT" <<'PY'
import csv, glob, sys, collections, statistics
out = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{out}/fp8_*.csv")):
    v = f.split("fp8_")[1][0]
    for r in csv.DictReader(open(f)):
        rows[(r["N"], r["K"], r["M"])][v].append(float(r["us"]))
print("fp8 mma, us per round: A (main) | B (x-late)")
for k, d in rows.items():
    print(f"{k[0]}x{k[1]} M={k[2]}: A {d['A']} | B {d['B']}")
PY
t0=$(date +%s)
PYTHONPATH=. timeout 90 $PY benchmarks/micro/env_ab.py --op fp8 --var TORCHQUANT_FP8_KSPLIT --values auto,1,2,4,8,16 \
  --shapes 6144x4096,4096x4096 --ms 1,2,4,8 --out "$OUT/fp8_ks.csv" > "$OUT/fp8_ks.log" 2>&1
PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py --op fp8 --path fma --var TORCHQUANT_FP8_KSPLIT --values auto \
  --shapes 6144x4096,4096x4096 --ms 1,2 --out "$OUT/fp8_ks_fma.csv" >> "$OUT/fp8_ks.log" 2>&1
echo "fp8 K-split sweep rc=$? $(( $(date +%s) - t0 )) s"; grep "fp8 " "$OUT/fp8_ks.log"
