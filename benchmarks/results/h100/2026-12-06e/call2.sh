#!/usr/bin/env bash
# 2026-12-06e call 2 (any card). Call 1 found the nvfp4 GEMVs 3-7 % faster when the rotation is ~5x L2
# than at >= 10x (cuBLAS and torch.sum: not faster). (1) Nsight Compute, cache control none: DRAM bytes
# and L2 hit rate per launch of nvfp4 / bf16 F.linear / torch.sum on 28672x8192 rotating over 2 and 8
# copies (benchmarks/micro/rotation_ncu.py). (2) nvfp4 path auto against the ring / wgmma GEMVs
# (MAX_M=-1) on the seven layers at M = 1 / 4 / 8 / 16 with the rotation over 8x L2
# (TORCHQUANT_BENCH_L2_FACTOR=8): do the direct rules hold when the flattering is gone?
# (3) bench_nvfp4 --quick at 8x L2.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
nvidia-smi --query-gpu=name --format=csv,noheader
. benchmarks/call_setup.sh "$1"
MET=dram__bytes_read.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum
for c in nvfp4 bf16 sum; do for r in 2 8; do
  PYTHONPATH=. timeout 90 ncu --profile-from-start off --cache-control none --clock-control none \
    --replay-mode application --metrics $MET --csv $PY benchmarks/micro/rotation_ncu.py --case $c --copies $r \
    > "$R/ncu_${c}_$r.log" 2>&1
  $PY benchmarks/micro/ncu_csv_summary.py "$R/ncu_${c}_$r.log" "$c r=$r" | cut -c1-260
done; done
echo "ncu $(( $(date +%s) - t0 )) s"
SH=4096x4096,6144x4096,4096x14336,14336x4096,28672x4096,28672x8192,128256x4096
TORCHQUANT_BENCH_L2_FACTOR=8 PYTHONPATH=. timeout 200 $PY benchmarks/micro/env_ab.py --op nvfp4 --layout 3 --path auto \
  --shapes $SH --var TORCHQUANT_NVFP4_DIRECT_MAX_M --values auto,-1,auto,-1 --ms 1,4,8,16 --out "$R/rule8.csv" > "$R/rule8.log" 2>&1
echo "rule8 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "ceiling|nvfp4" "$R/rule8.log" | cut -c1-150
TORCHQUANT_BENCH_L2_FACTOR=8 timeout 150 $PY benchmarks/bench_nvfp4.py --quick --out "$R/nvfp4_8" > "$R/nvfp4_8.log" 2>&1
echo "bench_nvfp4 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[nvfp4\]" "$R/nvfp4_8.log" | cut -c1-120 | head -40
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
