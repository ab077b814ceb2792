#!/usr/bin/env bash
# 2026-12-07f call 6, either card: builds 16 / 17 again (now with build 7's predicated x loads:
# call 2 found their unpredicated ones slower at M = 2..4, and call 4's probe put the lean form
# with predicated x 1.5-3.5 % ahead of build 8's cold), the bits test of every direct build and
# the A/B: path direct, layout 3, TORCHQUANT_NVFP4_DIRECT 7 / 16 / 8 / 17, two rounds, M = 1, 2,
# 4, 8. Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$gpu"
. benchmarks/call_setup.sh "$1"
timeout 90 $PY -m pytest -q -rs -p no:cacheprovider -n 16 tests/test_nvfp4_cuda.py -k "load_depth_builds_same_bits or direct_auto_rule" \
  > "$R/bits.log" 2>&1
echo "bits rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/bits.log"; grep -E "^FAILED" "$R/bits.log" | head -8
timeout 150 env PYTHONPATH=. $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path direct \
  --var TORCHQUANT_NVFP4_DIRECT --values 7,16,8,17,7,16,8,17 \
  --shapes 28672x8192,28672x4096,14336x4096,4096x4096,4096x14336,6144x4096 --ms 1,2,4,8 --out "$R/lean.csv" > "$R/lean.log" 2>&1
echo "lean A/B rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^nvfp4|ceiling" "$R/lean.log" | cut -c1-110
tar -C "$OUT" -czf "$OUT/r.tgz" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
