#!/usr/bin/env bash
# One device call after a change to the conv2d forward's configs: every conv2d config's float64 checks
# (parallel pytest shards) and gpu/conv/probe_box.py (the A_BOX configs, and the ones taken out, launched
# several times on the same inputs) while bench.py compiles every tile config; then, with the GPU to
# itself, the training rows, the causal conv1d rows and the forward rows (bench.py), each section's
# budget what is left of the call's END_S seconds (default 585).
#   run:  bash gpu/conv/run_box_h200.sh
set -uo pipefail
END=$((SECONDS + ${END_S:-585}))
OUT=${OUT:-/tmp/conv}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1 CONV_TRAIN_PARTS=1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
export PYTHONPATH=/tmp/site:$PWD
checks() {  # $1: log name, $2: -k expression, $3: shard i/n of the every-config checks (or "")
  TRITONIFY_CONV_CONFIG_SHARD=$3 TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1 TRITONIFY_COMPILE_BACKEND=aot_eager \
    TRITONIFY_TEST_DEVICE=cuda timeout 200 \
    python3 -m pytest -q -p no:cacheprovider -o addopts="" -rf tests/templates/kernel_checks.py -k "$2" > "$OUT/$1.log" 2>&1
  echo "rc=$?" >> "$OUT/$1.log"
}
for i in 0 1 2 3 4 5; do checks "checks_configs_$i" "conv2d_every_autotune_config" "$i/6" & done
checks checks_other "conv2d and not conv2d_every_autotune_config and not conv2d_forward_dgrad_wgrad" "" &
checks checks_other_fwd_bwd "conv2d_forward_dgrad_wgrad" "" &
(PROBE_WEIGHT_DESCRIPTOR=1 PROBE_BATCHES=32,128 PROBE_LAUNCHES=4 CONV_SHAPES=s1.3x3,s2.3x3,s3.3x3,s4.3x3 \
   TRITON_CACHE_DIR=/tmp/probe_cache timeout 200 python3 gpu/conv/probe_box.py "$OUT" > "$OUT/probe_box.log" 2>&1
 echo "probe rc=$?" >> "$OUT/probe_box.log") &
timeout 200 python3 gpu/conv/bench.py "$OUT" --precompile-only --workers 6 > "$OUT/precompile.log" 2>&1
wait
for f in "$OUT"/checks_*.log; do echo "$f: $(tail -n 2 "$f" | tr '\n' ' ')"; done; tail -n 1 "$OUT/probe_box.log"
section() {  # $1: sections, $2: the most seconds it may take
  local left=$((END - SECONDS - 10)); local b=$(( left < $2 ? left : $2 ))
  [ "$b" -gt 20 ] || { echo "no time for $1"; return; }
  timeout $((b + 25)) python3 gpu/conv/bench.py "$OUT" --no-precompile --budget "$b" --sections "$1" --rep-ms 10 >> "$OUT/bench.log" 2>&1
  echo "$1 rc=$? (budget $b s)"
}
section train 215; section conv1d 30; section fwd 400
python3 gpu/conv/report.py "$OUT/conv.jsonl" > "$OUT/report.md" 2>&1; tail -n 60 "$OUT/report.md"
