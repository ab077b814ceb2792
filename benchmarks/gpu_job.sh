#!/usr/bin/env bash
# The one GPU job: build for this GPU's arch only, run the GPU tests (and a
# compute-sanitizer pass), then the benchmarks; full logs and results go to
# the folder given as $1 (default $OUT, else ./gpu_out); a short table last.
#
#   bash benchmarks/gpu_job.sh [OUTDIR] [--full] [--no-tests] [--no-bench] [--sanitize]
#   env: MICRO=1 (read-pattern microbenchmark, benchmarks/micro), NCU=1 (Nsight
#   Compute on the decode kernels; NCU_ARGS more ncu options, NCU_PY_ARGS the
#   ncu_decode.py selection, e.g. "--only 28672,8192,1/8 --ops nvfp4 --paths mma"; NCU_KERNEL the
#   kernel-name regex, default gemv, dq_tile for the tiled GEMM; NCU_SCRIPT the script ncu runs,
#   default benchmarks/micro/ncu_decode.py), SWEEP=1 (fp8 K-split sweep), TEST_PATHS (default
#   tests), BENCH_ARGS (extra run_all.py arguments, e.g. "--ops fp8 --ms 1,16"),
#   EXTRA_BENCH (more run_all.py argument sets after the main one, separated by ';'),
#   FIRST_TESTS (pytest arguments run first, under FIRST_TIMEOUT seconds: new kernels),
#   TEST_TIMEOUT (seconds for the main pytest run, default 480; its failures are named even
#   when it is cut off),
#   EXTRA_PY (python scripts with arguments, separated by ';', run after the tests;
#   a script prefixed with "memcheck:", "racecheck:" or "synccheck:" runs under that
#   compute-sanitizer tool; --sanitize also runs racecheck and synccheck of
#   benchmarks/micro/smem_racecheck.py),
#   ONLY_SOURCES (build only these .cu files, comma-separated),
#   TORCHQUANT_COMMIT (the commit stamped on every table; pass it from the
#   checkout: the device tool's copy of the tree carries a stale .git, whose
#   HEAD the tables otherwise print, e.g. "df63a52-dirty" in the 2026-12-01 runs)
set -uo pipefail
cd "$(dirname "$0")/.."
OUTDIR=${1:-${OUT:-./gpu_out}}
shift || true
FULL=0; TESTS=1; BENCH=1; SAN=0; PYTEST_ARGS=${PYTEST_ARGS:-}
for a in "$@"; do
  case $a in
    --full) FULL=1 ;; --no-tests) TESTS=0 ;; --no-bench) BENCH=0 ;; --sanitize) SAN=1 ;;
  esac
done
mkdir -p "$OUTDIR"
. benchmarks/device_env.sh 16  # PY, ARCH, MAX_JOBS, TORCH_CUDA_ARCH_LIST, CC / CXX
export TORCHQUANT_COMMIT=${TORCHQUANT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; $PY -c "import torch; print('torch', torch.__version__)"; } | tee "$OUTDIR/env.txt"

if [ "${MICRO:-0}" = 1 ]; then
  nvcc -O3 -arch=sm_${ARCH/./} -o /tmp/stream_patterns benchmarks/micro/stream_patterns.cu &&
    /tmp/stream_patterns ${MICRO_ARGS:-} > "$OUTDIR/stream_patterns.txt" 2>&1
  echo "microbenchmark rc=$?"
fi
t0=$(date +%s)
# ONLY_SOURCES: setup.py's TORCHQUANT_ONLY_SOURCES (a device call that tests or times
# one op saves ~1 min of build).
if [ -n "${ONLY_SOURCES:-}" ]; then export TORCHQUANT_ONLY_SOURCES=$ONLY_SOURCES; echo "building only: $ONLY_SOURCES"; fi
# (Not build_ext -j 2: torch's BuildExtension writes one build.ninja into the shared build
# directory for each extension, so two extensions built side by side race on it.)
# A build made on the development machine for this torch and these sources
# (benchmarks/prebuilt.py; carried as .prebuilt) replaces the build when it matches and imports.
# PREBUILT=0 always builds here.
if [ "${PREBUILT:-1}" = 1 ] && $PY benchmarks/prebuilt.py use; then
  cp .prebuilt/sm90/build.log "$OUTDIR/build.log"
elif ! $PY setup.py build_ext --inplace > "$OUTDIR/build.log" 2>&1; then
  grep -E "error" "$OUTDIR/build.log" | head -30
  # Rebuild without the CUDA sources that failed, so the rest still gets tested.
  # a failing .cu or .cuh takes out every .cu of its folder (the format)
  dirs=$(grep -oE "csrc/[a-z0-9_]+/[a-z0-9_]+\.cuh?\([0-9]+\): error" "$OUTDIR/build.log" | sed 's|/[^/]*$||' | sort -u)
  bad=$(for d in $dirs; do ls $d/*.cu; done | paste -sd, -)
  echo "BUILD FAILED in: ${bad:-unknown}; retrying without them"
  [ -n "$bad" ] || exit 1
  TORCHQUANT_SKIP_SOURCES=$bad $PY setup.py build_ext --inplace > "$OUTDIR/build2.log" 2>&1 || { tail -20 "$OUTDIR/build2.log"; exit 1; }
fi
grep -E "^ptxas|bytes stack frame" "$OUTDIR/build.log" | grep -v " 0 bytes spill stores, 0 bytes spill loads" | grep -i "spill\|stack" | grep -v "0 bytes stack frame" | head -20 > "$OUTDIR/spills.txt" || true
echo "build: $(( $(date +%s) - t0 )) s; nonzero stack/spill lines: $(wc -l < "$OUTDIR/spills.txt")"

# Smoke test: a bad argument must raise a Python exception, not crash.
cat > /tmp/smoke.py <<'PY'
import torch, torchquant
print("torch cxx11 abi:", torch._C._GLIBCXX_USE_CXX11_ABI)
try:
    torch.ops.torchquant.prune24(torch.ones(2, 6))
    print("smoke: no exception raised (bad)")
except RuntimeError as e:
    print("smoke: bad input raises cleanly:", str(e).splitlines()[0][:100])
PY
if ! PYTHONPATH=$PWD $PY /tmp/smoke.py; then
  echo "smoke: CRASHED; backtrace:"
  (/opt/gcc/bin/g++ --version; g++ --version; echo "CC=${CC:-} CXX=${CXX:-}") 2>&1 | grep -v "^$" | grep -vi copyright | grep -vi "free software\|warranty" | head -6
  PYTHONPATH=$PWD timeout 120 cuda-gdb -q -batch -ex run -ex bt --args $PY /tmp/smoke.py 2>&1 | grep -E "^#" | head -25
fi

if [ "${NCU:-0}" = 1 ]; then
  PYTHONPATH=$PWD timeout 240 ncu --clock-control none --kernel-name regex:${NCU_KERNEL:-gemv} \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
    --section SchedulerStats --section LaunchStats --section ComputeWorkloadAnalysis \
    --section InstructionStats --section SourceCounters ${NCU_ARGS:-} $PY ${NCU_SCRIPT:-benchmarks/micro/ncu_decode.py} ${NCU_PY_ARGS:-} > "$OUTDIR/ncu.txt" 2>&1
  echo "ncu rc=$?"
fi
rc=0
# FIRST_TESTS: pytest arguments run before everything else under a hard wall-clock
# limit (FIRST_TIMEOUT seconds, default 180) and 60 s per test: a kernel run for the first
# time that hangs (a wrong barrier count) costs minutes, not the session.
if [ -n "${FIRST_TESTS:-}" ]; then
  t0=$(date +%s)
  timeout -k 10 ${FIRST_TIMEOUT:-180} $PY -m pytest -q -x --timeout=60 -p no:cacheprovider $FIRST_TESTS \
    > "$OUTDIR/first_tests.log" 2>&1; frc=$?
  tail -n ${FIRST_TAIL:-30} "$OUTDIR/first_tests.log"
  echo "first tests: rc=$frc (124 = wall-clock limit), $(( $(date +%s) - t0 )) s"
fi
if [ $TESTS = 1 ]; then
  t0=$(date +%s)
  # -v: one result line per test as it finishes, so a run cut short by TEST_TIMEOUT (seconds,
  # default 480) still names its failures (a -q run cut short printed only unnamed "F"s,
  # results/h200/2026-12-02g_fp8_xring).
  timeout -k 10 ${TEST_TIMEOUT:-480} $PY -m pytest -v -rf --tb=short --durations=15 --maxfail=200 --timeout=300 -p no:cacheprovider \
    -n ${PYTEST_WORKERS:-8} ${TEST_PATHS:-tests} $PYTEST_ARGS > "$OUTDIR/tests.log" 2>&1 || rc=$?
  # each failure once: the -v progress line and the -rf summary line name the same test
  grep -E "(FAILED|ERROR) tests/" "$OUTDIR/tests.log" | sed -e 's/^\[gw[0-9]*\] *\[ *[0-9]*%\] *//' -e 's/ - .*$//' |
    sort -u | head -40
  tail -n 3 "$OUTDIR/tests.log"
  echo "tests: rc=$rc (124 = TEST_TIMEOUT), $(( $(date +%s) - t0 )) s"
fi
if [ $SAN = 1 ]; then
  t0=$(date +%s)
  compute-sanitizer --tool memcheck --error-exitcode 9 $PY -m pytest -q -x -p no:cacheprovider \
    tests/test_int8_cuda.py tests/test_fp8_cuda.py tests/test_nvfp4_cuda.py -k "not large and not slow" \
    > "$OUTDIR/sanitizer.log" 2>&1; src=$?
  tail -n 6 "$OUTDIR/sanitizer.log"; echo "memcheck: rc=$src, $(( $(date +%s) - t0 )) s"
  # shared-memory hazards and barrier misuse of the decode kernels (small launches)
  for tool in racecheck synccheck; do
    t0=$(date +%s); topt=""; [ $tool = racecheck ] && topt="--racecheck-report hazard"
    PYTHONPATH=$PWD timeout 300 compute-sanitizer --tool $tool $topt --error-exitcode 9 --print-limit 20 \
      $PY benchmarks/micro/smem_racecheck.py > "$OUTDIR/$tool.log" 2>&1; src=$?
    tail -n 2 "$OUTDIR/$tool.log"; echo "$tool: rc=$src, $(( $(date +%s) - t0 )) s"
  done
fi
i=0; IFS=';' read -ra pys <<< "${EXTRA_PY:-}"
for cmd in "${pys[@]}"; do
  i=$((i + 1)); [ -n "${cmd// }" ] || continue
  pre=""
  for tool in memcheck racecheck synccheck; do
    case "$cmd" in *$tool:*) pre="compute-sanitizer --tool $tool --error-exitcode 9"; cmd=${cmd/$tool:/} ;; esac
  done
  t0=$(date +%s)
  eval "PYTHONPATH=$PWD $pre $PY $cmd" > "$OUTDIR/py_$i.log" 2>&1; prc=$?
  tail -n ${EXTRA_PY_TAIL:-30} "$OUTDIR/py_$i.log"; echo "extra py $i ($cmd): rc=$prc, $(( $(date +%s) - t0 )) s"
done
if [ "${SWEEP:-0}" = 1 ]; then
  PYTHONPATH=$PWD $PY benchmarks/sweep_gemv.py > "$OUTDIR/sweep.log" 2>&1 || echo "sweep failed"
  grep -E "best|ceiling" "$OUTDIR/sweep.log" | head -30
fi
if [ $BENCH = 1 ]; then
  mode=--quick; [ $FULL = 1 ] && mode=--full
  $PY benchmarks/run_all.py $mode ${BENCH_ARGS:-} --out "$OUTDIR/bench" > "$OUTDIR/bench.log" 2>&1 || echo "benchmarks failed rc=$?"
  # EXTRA_BENCH: more run_all.py argument sets, separated by ';', each into bench/extraN
  i=0; IFS=';' read -ra sets <<< "${EXTRA_BENCH:-}"
  for args in "${sets[@]}"; do
    i=$((i + 1)); [ -n "${args// }" ] || continue
    eval "$PY benchmarks/run_all.py $args --out \"$OUTDIR/bench/extra$i\"" > "$OUTDIR/bench_extra$i.log" 2>&1 || echo "extra bench $i failed"
    grep -A40 "^### " "$OUTDIR/bench_extra$i.log" | grep -E "^###|^\|" | head -40
  done
  (cd "$OUTDIR" && tar czf bench.tar.gz bench $(ls bench_extra*.log 2>/dev/null) && rm -rf bench bench_extra*.log)
  tail -n 60 "$OUTDIR/bench.log"
fi
# At most 8 files come back from the device tool's $OUT: keep tests.log,
# bench.log, env.txt, bench.tar.gz and any CSV beside them; pack the rest.
(cd "$OUTDIR" && rest=$(ls build.log build2.log spills.txt sanitizer.log ncu.txt stream_patterns.txt sweep.log py_*.log first_tests.log 2>/dev/null || true) &&
  [ -n "$rest" ] && tar czf logs.tar.gz $rest && rm -f $rest)
exit $rc
