#!/usr/bin/env bash
# Run 2026-12-05 (results: ../2026-12-05_layout/call2, call3). Was NOT RUN (written 2026-12-04i after the device time was spent): racecheck and synccheck of every
# format's shared-memory decode kernels (smem_racecheck.py; call 6 covered nvfp4 only), plus the
# two tests changed after call 3: test_gemv_auto_takes_wgmma_from_m5 (its upper edge now comes
# from torchquant.nn.dispatch.NVFP4_GEMV_WGMMA_MAX_M) and test_gemv_mma_x_resident_f16
# (TORCHQUANT_NVFP4_F16=2 now needs TORCHQUANT_TESTING=1). Full sm_90 build (~135 s); logs left as
# plain files so a timeout still returns them.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
t0=$(date +%s)
# a carried build of these sources (benchmarks/prebuilt.py, carry=[".prebuilt"]) skips the build
$PY benchmarks/prebuilt.py use || timeout 250 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
timeout 90 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py -k "wgmma_from_m5 or x_resident_f16" > "$R/tests.log" 2>&1
echo "tests rc=$?"; tail -n 1 "$R/tests.log"
cs() {  # name, timeout, tool args..., script args...
  local name=$1 to=$2; shift 2
  local t1=$(date +%s)
  PYTHONPATH=. timeout "$to" compute-sanitizer --print-limit 20 "$@" > "$R/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - t1 )) s"; tail -n 2 "$R/$name.log"
}
for f in fp8 int8 sparse24; do
  cs race_$f 90 --tool racecheck --racecheck-report hazard $PY benchmarks/micro/smem_racecheck.py --only $f
  cs sync_$f 60 --tool synccheck $PY benchmarks/micro/smem_racecheck.py --only $f
done
cs sync_nvfp4 40 --tool synccheck $PY benchmarks/micro/smem_racecheck.py --only nvfp4
echo "elapsed $(( $(date +%s) - t0 )) s"
