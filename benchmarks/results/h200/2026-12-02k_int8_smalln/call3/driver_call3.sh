#!/usr/bin/env bash
# Session 2026-12-02k call 3: the whole GPU test suite on the session's final kernels
# (benchmarks/gpu_job.sh: full build for sm_90, smoke test, tests, ring memcheck); the built
# extension modules come back packed (tq_so.tgz.*) so the benchmark call can skip the build.
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
TORCHQUANT_COMMIT=${COMMIT:-unknown} PYTEST_WORKERS=16 TEST_TIMEOUT=330 \
  EXTRA_PY="memcheck:benchmarks/micro/ring_memcheck.py" EXTRA_PY_TAIL=8 \
  timeout 560 bash benchmarks/gpu_job.sh "$R" --no-bench
echo "gpu_job rc=$?"
ls -la torchquant/*.so
tar czf "$OUT/tq_so.tgz" torchquant/*.so && split -b 15m "$OUT/tq_so.tgz" "$OUT/tq_so.tgz." && rm "$OUT/tq_so.tgz"
ls -la "$OUT"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
