#!/usr/bin/env bash
# 2026-12-03i call 2: the nvfp4 x-resident mma GEMV loading its first x groups before the weight
# ring's first stages (TORCHQUANT_NVFP4_XEARLY unset = on, -1 = the old order). Call 1's stall
# sampling had ~13 % of the warps' samples in the prologue, 8 % on the first x load.
# Run from the repository root on the device: bash <this> $OUT
set -uo pipefail
OUT=${1:?}
R=$OUT/r; mkdir -p "$R"
. benchmarks/device_env.sh 16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$R/env.txt"
t0=$(date +%s)
TORCHQUANT_ONLY_SOURCES=csrc/nvfp4/nvfp4_gemv.cu timeout 200 $PY setup.py build_ext --inplace > "$R/build.log" 2>&1
echo "build rc=$? $(( $(date +%s) - t0 )) s"
ab() { local name=$1; shift; PYTHONPATH=. timeout 90 $PY benchmarks/micro/env_ab.py "$@" --out "$R/$name.csv" > "$R/$name.log" 2>&1
  echo "$name rc=$?"; grep "M=" "$R/$name.log"; }
ab xe --op nvfp4 --path mma --var TORCHQUANT_NVFP4_XEARLY --values auto,-1,auto,-1 \
  --shapes 28672x8192,128256x4096,4096x14336,4096x4096,14336x4096,6144x4096 --ms 1,2,4
ab xe16 --op nvfp4 --path mma --act-dtype fp16 --var TORCHQUANT_NVFP4_XEARLY --values auto,-1,auto,-1 \
  --shapes 28672x8192,128256x4096 --ms 1
ab xe_pdl0 --op nvfp4 --path mma --env TORCHQUANT_PDL=0 --var TORCHQUANT_NVFP4_XEARLY --values auto,-1 \
  --shapes 28672x8192,4096x4096 --ms 1
PYTHONPATH=. timeout 60 $PY benchmarks/micro/pdl_ab.py --formats nvfp4 --ms 1,2 --var TORCHQUANT_NVFP4_XEARLY --modes auto,-1,auto,-1 --out "$R/layer.csv" > "$R/layer.log" 2>&1
echo "layer rc=$?"; grep fused "$R/layer.log"
t1=$(date +%s)
timeout -k 5 120 $PY -m pytest -q --timeout=90 -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py > "$R/tests_nvfp4.log" 2>&1
echo "nvfp4 tests rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^FAILED|^ERROR" "$R/tests_nvfp4.log" | head -12; tail -n 1 "$R/tests_nvfp4.log"
# memcheck of the x-resident launches (early x on; forced, every KS, split and not, rows past M)
cat > /tmp/mc_xres.py <<'PYEOF'
import os, torch, torchquant
from torchquant import ops
torch.manual_seed(0)
os.environ["TORCHQUANT_NVFP4_XRES"] = "1"
for ks in ("1", "2", "8"):
    os.environ["TORCHQUANT_NVFP4_KS"] = ks
    for splits in ("1", "3"):
        os.environ["TORCHQUANT_NVFP4_SPLITK"] = splits
        for N, K in ((17, 2112), (257, 4160), (33, 6144)):
            wp4, s4, g4 = ops.quantize_nvfp4(torch.randn(N, K, device="cuda") * 0.05)
            for M in (1, 3, 4, 8):
                ops.nvfp4_gemv(torch.randn(M, K, device="cuda", dtype=torch.bfloat16), wp4, s4, g4, None, "mma")
torch.cuda.synchronize()
print("xres memcheck script: ok")
PYEOF
PYTHONPATH=. timeout 120 compute-sanitizer --tool memcheck $PY /tmp/mc_xres.py > "$R/memcheck.log" 2>&1
echo "memcheck rc=$?"; tail -n 3 "$R/memcheck.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
(cd "$OUT" && tar czf r.tgz r && rm -rf r)
