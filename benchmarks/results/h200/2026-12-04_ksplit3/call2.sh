#!/usr/bin/env bash
# 2026-12-04 call 2: the read floor of the small decode layers in the timing method
# (benchmarks/micro/read_floor.cu: a kernel that only reads the layer's bytes, best of 44 grid /
# in-flight configurations, plain and PDL-launched), single sizes and the fused Llama-3-8B layer
# chains of fp8_block and nvfp4; beside it, the fp8 and nvfp4 GEMVs on the same shapes and the
# QuantLinear layer chain, same process order, same machine.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu,csrc/nvfp4/nvfp4_gemv.cu \
  timeout 200 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1 &
bpid=$!
nvcc -O3 -arch=sm_90 -o "$R/read_floor" benchmarks/micro/read_floor.cu > "$R/nvcc.log" 2>&1
echo "read_floor nvcc rc=$?"
# nvfp4 4096x4096 (codes + E4M3 scales), int8 4096x4096, fp8 4096x4096 + fp32 block scales,
# bf16 2:4 4096x4096 (values + meta), fp8 6144x4096, nvfp4 6144x4096, bf16 4096x4096
timeout 120 "$R/read_floor" 9.437 16.777 17.302 18.874 25.952 14.156 33.554 > "$R/floor_sizes.txt" 2>&1
echo "sizes rc=$?"; grep -E "^==|^(plain|pdl)|^  " "$R/floor_sizes.txt" | awk '/^==/{print; n=0; next} /^(plain|pdl)/{print; n=0; next} {if (n++ < 1) print}'
# the fused layer: qkv 6144x4096, o 4096x4096, gate_up 28672x4096, down 4096x14336
timeout 60 "$R/read_floor" chain 25.952,17.302,121.110,60.555 > "$R/floor_chain_fp8.txt" 2>&1
echo "chain fp8 rc=$?"; grep -A1 -E "^(==|plain|pdl)" "$R/floor_chain_fp8.txt"
timeout 60 "$R/read_floor" chain 14.156,9.437,66.060,33.030 > "$R/floor_chain_nvfp4.txt" 2>&1
echo "chain nvfp4 rc=$?"; grep -A1 -E "^(==|plain|pdl)" "$R/floor_chain_nvfp4.txt"
wait $bpid; echo "build rc=$? $(( $(date +%s) - t0 )) s"
ab() { local name=$1; shift; PYTHONPATH=. timeout 60 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
ab fp8 --op fp8 --path auto --var TORCHQUANT_PDL --values auto,0,auto,0 --shapes 4096x4096,6144x4096 --ms 1 --dense
ab nvfp4 --op nvfp4 --path auto --var TORCHQUANT_PDL --values auto,0,auto,0 --shapes 4096x4096,6144x4096 --ms 1
PYTHONPATH=. timeout 90 $PY benchmarks/micro/pdl_ab.py --formats fp8_block,nvfp4 --ms 1 \
  --modes auto,0,auto,0 --out "$R/layer.csv" > "$R/layer.log" 2>&1
echo "layer rc=$?"; tail -n 4 "$R/layer.log"
rm -f "$R/read_floor"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
