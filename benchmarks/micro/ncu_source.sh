#!/usr/bin/env bash
# Nsight Compute with the stall reasons per SASS instruction for one launch of
# one decode kernel (the sampling data of --set full, exported from the source
# page), summarised by benchmarks/micro/sass_stalls.py. Run from the repo root
# after the build, on the GPU machine:
#   bash benchmarks/micro/ncu_source.sh OUTDIR NAME KERNEL_REGEX [ncu_decode.py args]
#   e.g. ... $OUT fp8_m16 fp8_gemv_mma_cp --only 28672,8192,16 --ops fp8 --paths mma
# Writes NAME.stalls.txt (the summary) and NAME.tgz (report, details page, source CSV).
set -uo pipefail
out=$1; name=$2; kre=$3; shift 3
PY=${PYTHON:-python3}
cd "$(dirname "$0")/../.."
PYTHONPATH=$PWD timeout 240 ncu --clock-control none --kernel-name "regex:$kre" --launch-count 1 \
  --set full --import-source no -f -o "$out/$name" $PY benchmarks/micro/ncu_decode.py "$@" \
  > "$out/$name.log" 2>&1 || echo "ncu rc=$?"
ncu -i "$out/$name.ncu-rep" --page details --print-details all > "$out/$name.details.txt" 2>&1
ncu -i "$out/$name.ncu-rep" --page source --print-source sass --csv > "$out/$name.sass.csv" 2>&1
$PY benchmarks/micro/sass_stalls.py "$out/$name.sass.csv" "$out/$name.details.txt" > "$out/$name.stalls.txt" 2>&1
head -c 6000 "$out/$name.stalls.txt"
(cd "$out" && tar czf "$name.tgz" "$name.ncu-rep" "$name.details.txt" "$name.sass.csv" "$name.log" &&
  rm -f "$name.ncu-rep" "$name.details.txt" "$name.sass.csv" "$name.log")
