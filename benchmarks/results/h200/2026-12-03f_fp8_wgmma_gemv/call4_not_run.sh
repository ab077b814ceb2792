#!/usr/bin/env bash
# Session 2026-12-03f, prepared and not run (four device starts were refused): a same-machine A/B
# of the ring kernel's bf16 decode in natural pairs through fp32 (branch wip/fp8-ring-bf16-f32)
# against main's re-seat. Run from a checkout of the branch with ab_old/csrc/fp8/fp8_kernels.cuh =
# main's file (git show main:csrc/fp8/fp8_kernels.cuh), carry ["ab_run", "ab_old"]. Then on the
# branch build: fp8 tests, the fp16 table (a machine control), memcheck, the fp16 fused layer.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
SH=4096x4096,6144x4096,14336x4096,28672x4096,4096x14336,8192x8192,10240x8192,28672x8192,57344x8192,8192x28672,128256x4096
AB_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/dqgemm/dq_gemm_sm90a.cu \
AB_CMDS="benchmarks/micro/env_ab.py --op fp8 --act-dtype bf16 --var path --values auto --shapes $SH --ms 1,4,8,16 --dense --out $R/b16_{v}.csv;benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,8,16 --modes auto,smem --dtype bf16 --out $R/layer_bf16_{v}.csv" \
  timeout 330 bash benchmarks/micro/ab_builds.sh "$R" 2>&1 | grep -E "rc=|builds:|M=" | grep -v "^[AB][12] fp8 .*M=[248]:" 
. benchmarks/device_env.sh 16
t0=$(date +%s)
timeout -k 5 120 $PY -m pytest -q --timeout=60 -p no:cacheprovider -n 16 tests/test_fp8_cuda.py > "$R/tests.log" 2>&1
echo "fp8 tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^FAILED|^ERROR" "$R/tests.log" | head -12; tail -n 1 "$R/tests.log"
PYTHONPATH=. timeout 40 $PY benchmarks/micro/env_ab.py --op fp8 --act-dtype fp16 --var path --values auto --shapes $SH --ms 1,2,4,8,16 --dense --out "$R/f16.csv" > "$R/f16.log" 2>&1
echo "f16 table rc=$?"; grep -E "28672x8192|128256x4096" "$R/f16.log"
PYTHONPATH=. timeout 60 compute-sanitizer --tool memcheck --print-limit 20 $PY benchmarks/micro/fp8_wgmma_memcheck.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; tail -n 1 "$R/memcheck.log"
PYTHONPATH=. timeout 40 $PY benchmarks/micro/pdl_ab.py --formats fp8_block --ms 1,8,16 --modes auto,smem --dtype fp16 --out "$R/layer_fp16.csv" > "$R/layer_fp16.log" 2>&1
echo "layer fp16 rc=$?"; tail -n 3 "$R/layer_fp16.log"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
