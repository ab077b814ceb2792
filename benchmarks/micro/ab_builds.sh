#!/usr/bin/env bash
# Same-machine A/B of two builds: A = this tree, B = this tree with every file
# under ab_old/ (a scratch folder that mirrors repository paths, git-ignored,
# sent to the device with the run tool's carry) copied over it. Both builds
# compile only the CUDA sources in AB_SOURCES (comma-separated; default all),
# side by side, then each command of AB_CMDS (';'-separated python scripts with
# arguments, no ";" inside one; run from the build's root with PYTHONPATH=.; "{v}" becomes the
# variant and round, e.g. A1) runs alternately A, B, A, B, ... (AB_ROUNDS,
# default 2). Kernel timings moved by 2-5 % between machines in one session;
# within one run both builds see the same machine (results/h200/2026-12-02f_decode_ab).
#
#   mkdir -p ab_old/csrc/nvfp4 && git show <old>:csrc/nvfp4/nvfp4_kernels.cuh \
#       > ab_old/csrc/nvfp4/nvfp4_kernels.cuh
#   (device, carry ["ab_old"]) AB_SOURCES=csrc/nvfp4/nvfp4_gemv.cu AB_CMDS="benchmarks/micro/env_ab.py \
#       --op nvfp4 --var TORCHQUANT_NVFP4_KS --values auto --ms 1,8 --out \$OUT/nv_{v}.csv" \
#       bash benchmarks/micro/ab_builds.sh $OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?output folder}
mkdir -p "$OUT"
OV=${AB_OVERLAY:-ab_old}  # variant B's overlay folder (any git-ignored ab_*/; default ab_old)
[ -d "$OV" ] || { echo "$OV/ is missing (pass it with carry)"; exit 1; }
. benchmarks/device_env.sh 8  # as gpu_job.sh; 8 jobs: the two builds run side by side
export TORCHQUANT_ONLY_SOURCES=${AB_SOURCES:-}  # setup.py: empty = every source
B=$(mktemp -d)
cp -r setup.py pyproject.toml csrc torchquant benchmarks "$B"/
(cd "$OV" && find . -type f) | while read -r f; do cp "$OV/$f" "$B/$f"; done
t0=$(date +%s)
# Builds made on the development machine (benchmarks/prebuilt.py, carried as .prebuilt) replace
# either side's build where they match its sources: A from .prebuilt/sm90 (or AB_PREBUILT_A), B
# from .prebuilt/ab_B (`prebuilt.py make --overlay ab_old --dir .prebuilt/ab_B`; AB_OVERLAY and
# AB_PREBUILT_B name another overlay and its build).
ROOT=$PWD
($PY benchmarks/prebuilt.py use --dir "$ROOT/.prebuilt/${AB_PREBUILT_A:-sm90}" ||
  $PY setup.py build_ext --inplace > "$OUT/build_A.log" 2>&1; echo "build A rc=$?") &
(cd "$B" && { $PY benchmarks/prebuilt.py use --dir "$ROOT/.prebuilt/${AB_PREBUILT_B:-ab_B}" ||
  $PY setup.py build_ext --inplace > "$OUT/build_B.log" 2>&1; }; echo "build B rc=$?")
wait
echo "builds: $(( $(date +%s) - t0 )) s"
IFS=';' read -ra CMDS <<< "${AB_CMDS:?AB_CMDS}"
for r in $(seq 1 "${AB_ROUNDS:-2}"); do
  for v in A B; do
    d=$PWD; [ $v = B ] && d=$B
    for c in "${CMDS[@]}"; do
      (cd "$d" && PYTHONPATH=. OUT="$OUT" eval "$PY ${c//\{v\}/$v$r}" 2>&1 | sed "s/^/$v$r /")
    done
  done
done
