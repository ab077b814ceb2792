#!/usr/bin/env bash
# Dev diagnostics on the GPU machine (not part of CI): why a failing TORCH_CHECK
# crashes the process on the H200 image. Builds the CPU-only extension twice
# (stable Python ABI on / off) beside the CUDA build, runs a smoke test on each
# and a cuda-gdb backtrace of a crash; then the fp8 GEMV K-split sweep.
set -u
cd "$(dirname "$0")/.."
OUTDIR=${1:-${OUT:-./gpu_out}}; mkdir -p "$OUTDIR"
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 TORCH_CUDA_ARCH_LIST=9.0
cat > /tmp/smoke.py <<'PY'
import torch, torchquant
print("torch cxx11 abi:", torch._C._GLIBCXX_USE_CXX11_ABI, "file:", torchquant._C.__file__)
try:
    torch.ops.torchquant.prune24(torch.ones(2, 6))
    print("smoke: no exception (bad)")
except RuntimeError as e:
    print("smoke: raises cleanly:", str(e).splitlines()[0][:90])
PY
for v in 1 0; do
  d=/tmp/diag$v; rm -rf $d; mkdir -p $d; cp -r setup.py pyproject.toml csrc torchquant $d/; rm -f $d/torchquant/_C*.so
  (cd $d && TORCHQUANT_CPU_ONLY=1 TORCHQUANT_LIMITED_API=$v MAX_JOBS=6 $PY setup.py -q build_ext --inplace > build.log 2>&1; echo "limited_api=$v build rc=$?") &
done
MAX_JOBS=10 $PY setup.py build_ext --inplace > "$OUTDIR/build.log" 2>&1; echo "cuda build rc=$?"
wait
for v in 1 0; do echo "== limited_api=$v"; (cd /tmp/diag$v && PYTHONPATH=/tmp/diag$v $PY /tmp/smoke.py 2>&1 | tail -2); done
echo "== backtrace (limited_api=1)"
(cd /tmp/diag1 && PYTHONPATH=/tmp/diag1 timeout 100 cuda-gdb -q -batch -ex run -ex bt --args $PY /tmp/smoke.py 2>&1 | grep -E "^#" | cut -c1-160 | head -16)
PYTHONPATH=$PWD timeout 200 $PY benchmarks/sweep_gemv.py > "$OUTDIR/sweep.log" 2>&1; echo "sweep rc=$?"
grep -E "best|ceiling" "$OUTDIR/sweep.log" | head -24
