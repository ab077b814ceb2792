#!/usr/bin/env bash
# Session 2026-12-03g call 1. (a) Same-machine A/B of the fp8 ring kernel's bf16 decode in natural
# pairs through fp16 -> fp32 -> bf16 (A = this tree) against main's re-seat (B = ab_old/, main's
# fp8_kernels.cuh); fp8_block_gemv.cu only, so auto never reaches the wgmma GEMV and M <= 8 is
# the ring kernel throughout. Then fp8 tests on A. (b) In a separate copy, built at the same time:
# the int8 2:4 K split with 2 ranks on small layers (was call7_not_run.sh of 2026-12-03e), the
# fused layer under the K-split rules, memcheck of the 2:4 wgmma kernels.
# carry ["ab_run", "ab_old"]
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
git log -1 --format=%H > "$R/commit.txt" 2>/dev/null
C=$(mktemp -d)
cp -r setup.py pyproject.toml csrc torchquant benchmarks tests "$C"/
(cd "$C" && . benchmarks/device_env.sh 8 && TORCHQUANT_ONLY_SOURCES=csrc/sparse/sparse24.cu,csrc/sparse/sparse24_gemm_sm90a.cu,csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
  timeout 300 $PY setup.py build_ext --inplace > "$R/build_sp.log" 2>&1; echo "sparse build rc=$?" > "$R/build_sp.rc") &
SH=4096x4096,6144x4096,14336x4096,28672x4096,4096x14336,28672x8192,128256x4096
AB_SOURCES=csrc/fp8/fp8_block_gemv.cu \
AB_CMDS="benchmarks/micro/env_ab.py --op fp8 --act-dtype bf16 --var path --values auto --shapes $SH --ms 1,4,8 --dense --out $R/b16_{v}.csv;benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,8 --modes auto,smem --dtype bf16 --out $R/layer_bf16_{v}.csv" \
  timeout 330 bash benchmarks/micro/ab_builds.sh "$R" > "$R/ab.log" 2>&1
grep -E "rc=|builds:" "$R/ab.log"; grep -E "fp8 .*(28672x8192|128256x4096|4096x4096).*M=(1|8)\b|fused" "$R/ab.log" | head -40
wait
cat "$R/build_sp.rc"
. benchmarks/device_env.sh 16
t0=$(date +%s)
timeout -k 5 100 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests_fp8.log" 2>&1
echo "fp8 tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_fp8.log" | head -12; tail -n 1 "$R/tests_fp8.log"
cd "$C"
run() {  # name, timeout, args...
  local name=$1 to=$2; shift 2
  PYTHONPATH=. timeout $to $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1; grep "M=" "$R/$name.log"
}
run i8_ks 40 --op sparse24_int8 --var TORCHQUANT_SP24_WGMMA_TILE --path wgmma --values 16c1,16c1k --env TORCHQUANT_SP24_KSPLIT=2 --shapes 4096x4096,4096x14336,1024x4096,6144x4096 --ms 8,16
PYTHONPATH=. timeout 50 $PY benchmarks/micro/pdl_ab.py --formats sparse24,int8_sparse24,int8 --ms 1,8,16 --modes auto --out "$R/layer_sp.csv" > "$R/layer_sp.log" 2>&1; tail -n 9 "$R/layer_sp.log"
PYTHONPATH=. timeout 80 compute-sanitizer --tool memcheck --print-limit 20 $PY benchmarks/micro/sp24_wgmma_memcheck.py > "$R/memcheck_sp.log" 2>&1
echo "memcheck rc=$?"; tail -n 2 "$R/memcheck_sp.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
