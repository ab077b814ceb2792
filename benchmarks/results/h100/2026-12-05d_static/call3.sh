#!/usr/bin/env bash
# 2026-12-05d call 3: do the auto rules, tuned on the H200, pick well on an H100 (same sm_90 and
# 132 SMs, 3.1 instead of 4.4 TB/s)? Every forced path beside auto, for fp8_block_gemv /
# nvfp4_gemv / int8_matmul at two shapes and the decode Ms, one process each, cold L2, graph
# replay, bf16 cuBLAS in the same run. Run from the repository root, carry=[".prebuilt"]:
# bash <this> $OUT
set -uo pipefail
. benchmarks/call_setup.sh "$1"
for b in nvfp4 fp8 int8; do
  el=$(( $(date +%s) - t0 )); if [ $el -gt 300 ]; then echo "skip $b at $el s"; continue; fi
  ms=1,4,8,16; [ $b = int8 ] && ms=1,4,16,64
  timeout 150 $PY benchmarks/bench_$b.py --shapes 28672x8192,4096x4096 --ms $ms --forced-max-m 16 \
    --out "$R/$b" > "$R/$b.log" 2>&1
  echo "$b rc=$? $(( $(date +%s) - t0 )) s"
done
tar czf "$OUT/r.tgz" -C "$OUT" r
# the short table: per (shape, M), auto and the fastest row with its name
$PY - "$R" <<'PY'
import re, sys, glob, collections
for log in sorted(glob.glob(sys.argv[1] + "/*.log")):
    rows = collections.defaultdict(dict)
    for line in open(log):
        m = re.match(r"\[(\w+)\] (\S+) M=(\d+)\s+(.+?)\s{2,}([\d.]+) us", line)
        if m:
            rows[(m[2], int(m[3]))][m[4].strip()] = float(m[5])
    for (shape, M), r in rows.items():
        tq = {k: v for k, v in r.items() if k.startswith("tq ") and "quant" not in k and "static" not in k}
        if "tq auto" not in tq:
            continue
        best = min(tq, key=tq.get)
        bf = next((v for k, v in r.items() if k.startswith("bf16")), float("nan"))
        print(f"{log.split('/')[-1][:-4]:6s} {shape:12s} M={M:<3d} auto {tq['tq auto']:8.2f}  best {best:22s} {tq[best]:8.2f}  bf16 {bf:8.2f}")
PY
echo "elapsed $(( $(date +%s) - t0 )) s"
