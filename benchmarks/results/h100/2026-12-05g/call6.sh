#!/usr/bin/env bash
# 2026-12-05g call 6: the 2:4 tests after the 16-bit small-grid rule change (sparse24.cu,
# auto_takes_sparse_wgmma), then auto beside every forced path on the shapes of calls 4-5 at
# M = 1..3 (the rule's choice should be the fastest or level). On an H200 the same A/B decides it.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
. benchmarks/call_setup.sh "$1"
timeout 200 $PY -m pytest -q -p no:cacheprovider -n 8 tests/test_sparse24_wgmma_cuda.py tests/test_sparse24.py > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED" "$R/tests.log" | head -5
PYTHONPATH=. timeout 200 $PY benchmarks/micro/env_ab.py --op sparse24 --var path --values auto,fma,wgmma,mma,auto \
  --shapes 4096x4096,1024x4096,2048x2048,768x2048,3072x4096,4096x8192,4096x14336,1024x8192,1024x14336,2048x14336,2048x8192 \
  --ms 1,2,3 --out "$R/sp24_paths.csv" > "$R/sp24_paths.log" 2>&1
echo "ab rc=$? $(( $(date +%s) - t0 )) s"; grep sparse24 "$R/sp24_paths.log"
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
