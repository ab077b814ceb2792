#!/usr/bin/env bash
# 2026-12-06e call 6 (either card). The direct rule of 4364850: M = 9..16 on the one-wave grids on every
# card, the long rows at M = 4..8 on wide cards (the H200). (1) every test (the nvfp4 auto-rule test
# checks the launched kernel against the rule); (2) path auto against the ring / wgmma GEMVs (MAX_M=-1)
# on 4096x14336 at M = 1..8 and on 4096x4096 / 6144x4096 at M = 9 / 12 / 16; (3) bench_e2e once.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
. benchmarks/call_setup.sh "$1"
timeout 240 $PY -m pytest -q -p no:cacheprovider -n 16 tests > "$R/whole_suite.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/whole_suite.log"; grep -E "^FAILED" "$R/whole_suite.log" | head -8
PYTHONPATH=. timeout 80 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto --shapes 4096x14336 \
  --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values auto,-1,auto,-1 --ms 1,2,3,4,6,8 --out "$R/long.csv" > "$R/long.log" 2>&1
echo "long rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/long.log" | cut -c1-150
PYTHONPATH=. timeout 80 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto --shapes 4096x4096,6144x4096 \
  --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values auto,-1,auto,-1 --ms 9,12,16 --out "$R/pass.csv" > "$R/pass.log" 2>&1
echo "pass rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/pass.log" | cut -c1-150
timeout 120 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e.log" | grep -E "bf16 F.linear|QuantLinear (nvfp4|fp8_block|int8)( static)?  " | cut -c1-100
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
