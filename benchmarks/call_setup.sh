# The start of a one-off device driver (benchmarks/results/<gpu>/<run>/call*.sh), sourced from
# the repository root after `set -uo pipefail`: `. benchmarks/call_setup.sh "$1"`.
# Sets OUT (the folder given), R ($OUT/r, created: logs stay plain files so a timeout still
# returns them), t0 (the start, for elapsed times), PY and the build environment
# (device_env.sh, MAX_JOBS 16); installs the carried build (benchmarks/prebuilt.py,
# carry=[".prebuilt"]) when it matches the tree and imports, else builds (full extension,
# log $R/build.log); exports TORCHQUANT_COMMIT (unknown unless given) for the tables; defines
# ab NAME TIMEOUT SCRIPT ARGS... (one A/B script run into $R/NAME.csv / .log, its rows printed).
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
