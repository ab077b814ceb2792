# The start of a one-off device driver (benchmarks/results/<gpu>/<run>/call*.sh), sourced from
# the repository root after `set -uo pipefail`: `. benchmarks/call_setup.sh "$1"`.
# Sets OUT (the folder given), R ($OUT/r, created: logs stay plain files so a timeout still
# returns them), t0 (the start, for elapsed times), PY and the build environment
# (device_env.sh, MAX_JOBS 16); installs the carried build (benchmarks/prebuilt.py,
# carry=[".prebuilt"]) when it matches the tree and imports, else builds (full extension,
# log $R/build.log); exports TORCHQUANT_COMMIT (unknown unless given) for the tables; defines
# ab NAME TIMEOUT SCRIPT ARGS... (one A/B script run into $R/NAME.csv / .log, its rows printed),
# gpu_tests TIMEOUT K_EXPR FILES... (pytest -n 16 into $R/tests.log, its summary and failures
# printed) and e2e_rows TIMEOUT (bench_e2e M = 1 / 8 into $R/e2e, the fused layer's bf16,
# raw-op and QuantLinear rows printed).
OUT=${1:?usage: . benchmarks/call_setup.sh OUTDIR}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
$PY benchmarks/prebuilt.py use || timeout 250 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
export TORCHQUANT_COMMIT=${TORCHQUANT_COMMIT:-unknown}

ab() {  # name timeout script args...: one A/B run, its rows printed
  local n=$1 t=$2 s=$3; shift 3
  timeout "$t" env PYTHONPATH=. $PY "$s" "$@" --out "$R/$n.csv" > "$R/$n.log" 2>&1
  echo "$n rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^(fp8|nvfp4|[0-9]+x[0-9]+ M=)" "$R/$n.log"
}

gpu_tests() {  # timeout k-expression files...
  local t=$1 k=$2; shift 2
  timeout "$t" $PY -m pytest -q -rs -p no:cacheprovider -n 16 "$@" -k "$k" > "$R/tests.log" 2>&1
  echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -8
}

e2e_rows() {  # timeout
  timeout "$1" env PYTHONPATH=. $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
  echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" \
    | grep -E "bf16 F.linear|fp8-block tq|nvfp4 tq|QuantLinear (nvfp4|fp8_block)( static| tiled| tiled_static)?  " \
    | cut -c1-100
}
