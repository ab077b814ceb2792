#!/usr/bin/env bash
# Session 2026-12-03d call 4: same-machine A/B of the 2:4 sparse-wgmma GEMM, A = this tree
# (decode tiles, wide stages, metadata registers double-buffered), B = the session's start
# (5276595: the three prefill tiles, metadata reloaded into the registers of the group in
# flight). M = 2048 on the prefill tiles (256c2 in both) beside dense int8 and bf16 cuBLAS
# (issue 6's 1.4x), and M = 8 (A: 16c1; B: 128c1).
set -uo pipefail
OUT=${1:?}
SH=28672x8192,14336x4096,4096x4096
AB_SOURCES=csrc/sparse/sparse24.cu,csrc/sparse/sparse24_gemm_sm90a.cu,csrc/int8/int8_matmul.cu,csrc/int8/int8_gemm_sm90a.cu \
AB_CMDS="benchmarks/micro/env_ab.py --op sparse24_int8 --var path --values wgmma --shapes $SH --ms 8,2048 --out \$OUT/i8sp_{v}.csv;benchmarks/micro/env_ab.py --op int8 --var path --values auto --shapes $SH --ms 2048 --out \$OUT/i8_{v}.csv;benchmarks/micro/env_ab.py --op sparse24 --var path --values wgmma --shapes $SH --ms 8,2048 --dense --out \$OUT/bf16sp_{v}.csv" \
  timeout 560 bash benchmarks/micro/ab_builds.sh "$OUT" > "$OUT/ab.log" 2>&1
echo "ab rc=$?"
grep -E "build|M=" "$OUT/ab.log"
(cd "$OUT" && tar czf r.tgz *.csv *.log && rm -f *.csv)
