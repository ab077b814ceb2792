#!/usr/bin/env bash
# Session 2026-12-03b call 2: full sm_90 build of 235581d (+ env_ab's "--var path"), then
# (1) int8 decode at M = 8 / 16 through the wgmma GEMM (forced) against the gemv, per tile
# configuration and split, (2) the Llama-3-8B layer table (bench_e2e: 7 projections and fused,
# every format incl. QuantLinear) at M = 2048, then at M = 1 and 8. Results land in $OUT/r as
# they are made.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
export TORCHQUANT_COMMIT=${COMMIT:-unknown}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
timeout 300 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
ab() {  # name, env_ab arguments
  local name=$1; shift
  local t0=$(date +%s)
  PYTHONPATH=. timeout 75 $PY benchmarks/micro/env_ab.py --op int8 "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - t0 )) s"; grep "M=" "$R/$name.log"
}
ab path_ab --var path --values gemv,wgmma,gemv,wgmma --shapes 28672x8192,128256x4096,14336x4096,4096x14336 --ms 8,16
ab tile_ab --path wgmma --var TORCHQUANT_INT8_WGMMA_TILE --values 64x128c1,64x64c1,64x128k2,64x128k4,64x64k4,128x128c1 \
  --shapes 28672x8192,14336x4096 --ms 16
ab split_ab --path wgmma --env TORCHQUANT_INT8_WGMMA_TILE=64x128c1 --var TORCHQUANT_INT8_WGMMA_SPLITS \
  --values 1,2,4,8 --shapes 28672x8192,14336x4096 --ms 16
for ms in 2048 1,8; do
  t0=$(date +%s)
  tag=${ms/,/_}
  PYTHONPATH=. timeout 150 $PY benchmarks/bench_e2e.py --ms $ms --out "$R/e2e_m$tag" > "$R/e2e_m$tag.log" 2>&1
  echo "e2e M=$ms rc=$? $(( $(date +%s) - t0 )) s"
  $PY - "$R/e2e_m$tag/e2e.csv" <<'PY'
import csv, sys
for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")):
    print(f"{r['model'][:18]:18s} M={r['M']:>4s} {r['impl'][:28]:28s} {r['time_us']:>9s} vs_bf16={r['vs_bf16']:>6s} {r['check']}")
PY
done
