#!/usr/bin/env bash
# The direct-GEMV probe (.prebuilt/probe/nvfp4_direct_shape, built from nvfp4_direct_shape.cu on
# the development machine and carried; built here into /tmp when it is absent or does not start)
# twice per shape list: hot (PROBE_HOT_MB=24: the grid on an L2-resident footprint) and cold
# (operands rotated past 8x L2), logs $1/probe_hot24.log and $1/probe_hot0.log, then the M = 1, 4
# and 8 rows of both. PROBE_VARIANTS picks the forms (the probe's default: all of them).
# Usage, from the repository root: bash benchmarks/micro/probe_hot_cold.sh OUTDIR SHAPE [SHAPE...]
set -uo pipefail
out=${1:?usage: probe_hot_cold.sh OUTDIR SHAPE...}; shift; mkdir -p "$out"
t0=$(date +%s)
B=$(bash benchmarks/micro/probe_bin.sh "$out")
for mb in 24 0; do
  PROBE_HOT_MB=$mb timeout ${PROBE_S:-120} $B "$@" > "$out/probe_hot$mb.log" 2>&1
  echo "probe hot=$mb MB rc=$? $(( $(date +%s) - t0 )) s"
done
for mb in 24 0; do
  echo "== hot $mb MB (0: cold)"
  grep -E "^==|^M=(1|4|8) " "$out/probe_hot$mb.log" | sed -E 's/  +/ /g; s/ err [^ ]*//; s/ grid [0-9]+//; s/regs //; s| blocks/SM||' | cut -c1-80
done
