#!/usr/bin/env bash
# One device call for the convolution templates: the GPU float64 checks (every autotune config, in
# parallel pytest processes) while gpu/conv/bench.py compiles every tile config in parallel workers; then,
# with the GPU to itself, bench.py's timings. Results under $OUT (conv.jsonl, the check logs).
#   run:  bash gpu/conv/run_on_h200.sh [TIMING_BUDGET_S] [SECTIONS] [CHECKS]
#   CHECKS: "conv2d" (the conv2d checks alone: after a change to conv2d.py) or "all" (default: causal conv1d too)
#   REP_MS (environment): GpuTimer's repetitions per pass (default 40)
#   CONV_CHECKS_ONLY=1 (environment): the float64 checks alone, no precompile and no timings
#   CONV_TRAIN_PARTS=1 (environment, the default here): each step of a training row timed alone too
set -uo pipefail
BUDGET=${1:-260}; SECTIONS=${2:-fwd,conv1d,train}; CHECKS=${3:-all}
OUT=${OUT:-/tmp/conv}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1 CONV_TRAIN_PARTS=${CONV_TRAIN_PARTS:-1}
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
export PYTHONPATH=/tmp/site:$PWD
SHARDS=6
checks() {  # $1: log name, $2: -k expression, $3: shard i/n of the every-config checks (or "")
  TRITONIFY_CONV_CONFIG_SHARD=$3 TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1 TRITONIFY_COMPILE_BACKEND=aot_eager \
    TRITONIFY_TEST_DEVICE=cuda timeout 220 \
    python3 -m pytest -q -p no:cacheprovider -o addopts="" -rf tests/templates/kernel_checks.py -k "$2" > "$OUT/$1.log" 2>&1
  echo "rc=$?" >> "$OUT/$1.log"
}
for i in $(seq 0 $((SHARDS - 1))); do checks "checks_configs_$i" "conv2d_every_autotune_config" "$i/$SHARDS" & done
if [ "$CHECKS" = all ]; then OTHER="(conv2d or causal_conv1d) and not conv2d_every_autotune_config"
else OTHER="conv2d and not conv2d_every_autotune_config"; fi
checks checks_other "($OTHER) and not conv2d_forward_dgrad_wgrad" "" &
checks checks_other_fwd_bwd "conv2d_forward_dgrad_wgrad" "" &
[ "${CONV_CHECKS_ONLY:-0}" = 1 ] || timeout 200 python3 gpu/conv/bench.py "$OUT" --precompile-only --workers 6 > "$OUT/precompile.log" 2>&1
wait
for f in "$OUT"/checks_*.log; do echo "$f: $(tail -n 2 "$f" | tr '\n' ' ')"; done
[ "${CONV_CHECKS_ONLY:-0}" = 1 ] && exit 0
python3 gpu/conv/bench.py "$OUT" --no-precompile --budget "$BUDGET" --sections "$SECTIONS" --rep-ms "${REP_MS:-40}" > "$OUT/bench.log" 2>&1
echo "bench rc=$?"; tail -n 3 "$OUT/bench.log"
python3 gpu/conv/report.py "$OUT/conv.jsonl" || true
