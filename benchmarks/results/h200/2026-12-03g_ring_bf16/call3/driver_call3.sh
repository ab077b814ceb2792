#!/usr/bin/env bash
# Session 2026-12-03g call 3. (a) Same-machine A/B, int8_matmul.cu only: the int8 GEMV with 6
# chunks of loads in flight per lane for tiles of <= 8 tokens (A = this tree) against 4 (B =
# ab_old/, main's int8_kernels.cuh). (b) A full sm_90 build of this tree in a copy, then the 2:4
# wgmma + fp8 + int8 tests, int8 2:4 auto at M = 3..8 on the small layers (the M >= 4 K-split
# rule), and the Llama-3-8B layer table (bench_e2e, every format) at M = 1 and 8.
# carry ["ab_old"]
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
AB_SOURCES=csrc/int8/int8_matmul.cu \
AB_CMDS="benchmarks/micro/env_ab.py --op int8 --var path --values auto --shapes 28672x8192,128256x4096,4096x14336 --ms 1,4,8 --out $R/i8_{v}.csv" \
  timeout 200 bash benchmarks/micro/ab_builds.sh "$R" > "$R/ab.log" 2>&1
grep -E "rc=|builds:" "$R/ab.log"; grep -E "M=" "$R/ab.log"
C=$(mktemp -d)
cp -r setup.py pyproject.toml csrc torchquant benchmarks tests "$C"/
cd "$C"
. benchmarks/device_env.sh 16
export TORCHQUANT_COMMIT=${COMMIT:-unknown}
t0=$(date +%s)
timeout 250 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout -k 5 120 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_sparse24_wgmma_cuda.py tests/test_int8_cuda.py tests/test_fp8_cuda.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
PYTHONPATH=. timeout 30 $PY benchmarks/micro/env_ab.py --op sparse24_int8 --var path --values auto,wgmma,gemv --shapes 4096x4096,4096x14336,1024x4096 --ms 3,4,6 --out "$R/i8sp_auto.csv" > "$R/i8sp_auto.log" 2>&1
echo "i8sp_auto rc=$?"; grep "M=" "$R/i8sp_auto.log"
t0=$(date +%s)
PYTHONPATH=. timeout 140 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_m1_8" > "$R/e2e_m1_8.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"
grep -E "fused" "$R/e2e_m1_8.log" | grep -E "bf16 F.linear|QuantLinear" 
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
