#!/usr/bin/env bash
# Prints the path of a direct-GEMV probe binary that starts on this GPU: the carried
# .prebuilt/probe/nvfp4_direct_shape (built from nvfp4_direct_shape.cu on the development machine),
# else one built here into /tmp (nvcc -O3 -arch=sm_90). Logs probe_start.log / probe_build.log in
# the folder given. Usage, from the repository root: B=$(bash benchmarks/micro/probe_bin.sh LOGDIR)
set -uo pipefail
log=${1:?usage: probe_bin.sh LOGDIR}; mkdir -p "$log"
B=.prebuilt/probe/nvfp4_direct_shape
if ! PROBE_VARIANTS=none PROBE_HOT_MB=1 timeout 60 $B 256x256 > "$log/probe_start.log" 2>&1; then
  t0=$(date +%s)
  B=/tmp/nvfp4_direct_shape
  (cd benchmarks/micro && timeout 120 nvcc -O3 -arch=sm_90 -I../../csrc -o $B nvfp4_direct_shape.cu) > "$log/probe_build.log" 2>&1
  echo "probe built rc=$? $(( $(date +%s) - t0 )) s" >&2
fi
echo "$B"
