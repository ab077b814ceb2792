#!/usr/bin/env bash
# 2026-12-04d call 3: timing probe (wrong values, same bytes): the fp8 ring kernel reading its
# weight as if stored in 16 x 128-byte tiles, each ring stage one contiguous 2 KB block
# (TORCHQUANT_FP8_PACKED_PROBE=1, a temporary hack in the probe tree), against the row-major
# reads of main, in one process. Build: fp8_block_gemv.cu only.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
t0=$(date +%s)
. benchmarks/device_env.sh 16
TORCHQUANT_ONLY_SOURCES=csrc/fp8/fp8_block_gemv.cu $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
E="PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op fp8 --path mma"
S=28672x8192,128256x4096,28672x4096,14336x4096,4096x4096
for dt in fp16 bf16; do
  eval "$E --act-dtype $dt --var TORCHQUANT_FP8_PACKED_PROBE --values auto,1,auto,1 --shapes $S --ms 1,4,8 --out $R/probe_$dt.csv" 2>&1 | grep -v Warn
done
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
