#!/usr/bin/env bash
# Session 2026-12-02k call 2: fp8 ring GEMV (x in registers), x(i) permuted into B fragments
# before x(i + 1)'s loads are issued (A = this tree) against main (B = ab_old), same machine;
# fp8 GPU tests on A.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
SH=28672x8192,128256x4096,14336x4096,4096x14336,4096x4096,6144x4096
AB_SOURCES=csrc/fp8/fp8_block_gemv.cu AB_ROUNDS=2 \
AB_CMDS="benchmarks/micro/env_ab.py --op fp8 --path auto --var TORCHQUANT_PDL --values auto --shapes $SH --ms 1,2,4,8,16 --out $R/fp8_{v}.csv" \
  timeout 420 bash benchmarks/micro/ab_builds.sh "$R" > "$R/ab.log" 2>&1
echo "ab rc=$?"; grep -E "build|builds" "$R/ab.log"
. benchmarks/device_env.sh 16
t0=$(date +%s)
timeout -k 10 150 $PY -m pytest -q --timeout=120 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR" "$R/tests.log" | head -10; tail -n 1 "$R/tests.log"
python3 - "$R" <<'PY'
import csv, glob, sys, collections
R = sys.argv[1]
t = collections.defaultdict(dict)
for f in sorted(glob.glob(f"{R}/fp8_*.csv")):
    v = f.rsplit("_", 1)[1][:-4]
    for r in csv.DictReader(open(f)):
        t[(int(r["N"]), int(r["K"]), int(r["M"]))][v] = r["us"]
for k in sorted(t, key=lambda k: (k[0] * k[1], k[2])):
    print(f"{k[0]}x{k[1]} M={k[2]}: " + "  ".join(f"{v}:{t[k][v]}" for v in sorted(t[k])))
PY
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
