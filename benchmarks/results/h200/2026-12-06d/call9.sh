#!/usr/bin/env bash
# 2026-12-06d call 9: builds 13-15 (16 x rows per pass, each word decoded once for both token
# tiles; forced only). (1) the direct tests (builds 2-15 give the default build's bits);
# (2) memcheck of builds 13-15; (3) path direct on builds 7 / 13 / 14 / 15 against path auto (the
# wgmma GEMV), seven Llama-3 layers, M = 9 / 12 / 16, two rounds.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
SH=4096x4096,6144x4096,4096x14336,14336x4096,28672x4096,28672x8192,128256x4096
timeout 120 $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py -k direct > "$R/tests_direct.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_direct.log"; grep -E "^FAILED" "$R/tests_direct.log" | head -8
timeout 100 compute-sanitizer --tool memcheck --print-limit 10 env PYTHONPATH=. $PY \
  benchmarks/micro/nvfp4_direct_memcheck.py 13 14 15 > "$R/memcheck_direct.log" 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -n 2 "$R/memcheck_direct.log"
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT --values 7,13,14,15,7,13,14,15 --ms 9,12,16 --out "$R/nt2.csv" > "$R/nt2.log" 2>&1
echo "nt2 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/nt2.log" | cut -c1-150
PYTHONPATH=. timeout 100 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto --shapes $SH \
  --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values auto,auto --ms 9,12,16 --out "$R/m16_auto.csv" > "$R/m16_auto.log" 2>&1
echo "auto rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/m16_auto.log" | cut -c1-150
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
