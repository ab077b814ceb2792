#!/usr/bin/env bash
# 2026-12-07 call 2 (H100, the machine of call 1 still warm): every test file that call 1's
# driver (results/h200/2026-12-07/call1.sh, H100 branch) did not run, i.e. the whole GPU suite
# but test_fp8_cuda.py, test_nvfp4_cuda.py and test_sparse24.py. Run from the repository root,
# carry=[".prebuilt"]: bash <this> $OUT
. benchmarks/call_setup.sh "$1" > /dev/null 2>&1; echo "PY=$PY"
timeout 330 $PY -m pytest -q -p no:cacheprovider -n 16 tests --ignore=tests/test_fp8_cuda.py \
  --ignore=tests/test_nvfp4_cuda.py --ignore=tests/test_sparse24.py > "$OUT/rest.log" 2>&1
echo "rc=$?"; tail -n 3 "$OUT/rest.log"; grep -E "^FAILED|^ERROR" "$OUT/rest.log" | head -20
