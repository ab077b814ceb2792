#!/usr/bin/env bash
# 2026-12-05e call 1 (asks for an H200; on any other card it runs only the capability report's
# tests, whose kernel probe has never run on a GPU, and stops to spend little device time).
# On an H200 (the H100 fallback also runs (c)):
# (a) bench_e2e M = 1 / 8, two rounds: the "QuantLinear <fmt> static" rows beside the default rows
#     (issue 7's 2.5x for nvfp4 at M = 1 is decided by the static row; never timed on an H200);
# (b) the op alone, 28672x8192, static_weight beside auto: int8 M = 1 / 16 (issue 3's <= 57 us),
#     fp8_block M = 1 / 8 / 16 (issue 4's <= 61 us), nvfp4 layout 1 M = 1 / 8 / 16 (issue 5's 34);
# (c) bench_decode (new: a whole decoder layer per decode step, contexts 1024 / 4096), first run;
# (d) the capability report's tests, the PDL tests, nvfp4 and module tests as time allows.
# On an H100 it runs the report tests and bench_decode only.
# Run from the repository root, carry=[".prebuilt"]: bash <this> $OUT
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
. benchmarks/call_setup.sh "$1"
timeout 200 $PY -m pytest -q -p no:cacheprovider tests/test_seed_claims.py > "$R/tests_report.log" 2>&1
echo "report tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests_report.log"; grep -E "^FAILED|Error" "$R/tests_report.log" | head -10
timeout 60 $PY -m torchquant report --size 256 --no-ladder --no-real > "$R/report.txt" 2>&1; echo "report rc=$?"; head -30 "$R/report.txt"
decode() {
  local el=$(( $(date +%s) - t0 )); [ $el -gt 520 ] && { echo "decode skipped at $el s"; return; }
  timeout $(( 580 - el )) $PY benchmarks/bench_decode.py --out "$R/decode_$1" > "$R/decode_$1.log" 2>&1
  echo "decode $1 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "bf16 nn|QuantLinear (int8|fp8_block|nvfp4)( static)? |without|FAIL" "$R/decode_$1.log" | cut -c1-110
}
if [[ "$gpu" != *H200* ]]; then
  decode 1
  tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"; echo "not an H200: stop after $(( $(date +%s) - t0 )) s"; exit 0
fi
e2e() {
  local el=$(( $(date +%s) - t0 )); [ $el -gt 450 ] && { echo "e2e $1 skipped at $el s"; return; }
  timeout 100 $PY benchmarks/bench_e2e.py --ms 1,8 --out "$R/e2e_$1" > "$R/e2e_$1.log" 2>&1
  echo "e2e $1 rc=$? $(( $(date +%s) - t0 )) s"; grep -E "fused" "$R/e2e_$1.log" | grep -E "bf16 F.linear|QuantLinear (int8|fp8_block|nvfp4)" | cut -c1-90
}
e2e 1
for b in int8 fp8 nvfp4; do
  ms=1,8,16; [ $b = int8 ] && ms=1,16
  timeout 120 $PY benchmarks/bench_$b.py --shapes 28672x8192 --ms $ms --forced-max-m 1 --out "$R/$b" > "$R/$b.log" 2>&1
  echo "$b rc=$? $(( $(date +%s) - t0 )) s"; grep -E "tq auto|tq layout1|bf16 F" "$R/$b.log" | cut -c1-100 | head -12
done
decode 1
e2e 2
el=$(( $(date +%s) - t0 ))
[ $el -lt 500 ] && timeout $(( 570 - el )) $PY -m pytest -q -p no:cacheprovider -n 16 tests/test_pdl_cuda.py tests/test_nvfp4_cuda.py \
  tests/test_nn.py -k "not test_nn or static or graph or compile" > "$R/tests.log" 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; tail -n 1 "$R/tests.log"; grep -E "^FAILED|Error" "$R/tests.log" | head -10
tar czf "$OUT/r.tgz" -C "$OUT" r && rm -rf "$R"
echo "elapsed $(( $(date +%s) - t0 )) s"
