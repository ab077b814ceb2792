#!/usr/bin/env bash
# 2026-12-05g call 4: bf16 2:4 decode (sparse24_gemv) at M = 1..4 on the small and mid layers,
# every path forced beside auto: does the CUDA-core GEMV (fma) beat the sparse-wgmma K-split tile
# at M = 2 where auto_takes_sparse_wgmma takes the latter? Run from the repository root,
# carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
. benchmarks/call_setup.sh "$1"
PYTHONPATH=. timeout 150 $PY benchmarks/micro/env_ab.py --op sparse24 --var path --values auto,fma,wgmma,mma,auto \
  --shapes 4096x4096,1024x4096,4096x14336,2048x2048,8192x8192,6144x4096 --ms 1,2,3,4 --out "$R/sp24_paths.csv" > "$R/sp24_paths.log" 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep sparse24 "$R/sp24_paths.log"
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
