#!/usr/bin/env bash
# A short exploration call: the float64 checks of the forward configs that read the input's descriptor
# (A_TMA) and of the backward's cuDNN / per-layer choice, while bench.py compiles the selected layers'
# configs; then the forward and training timings of those layers alone, each training step's parts too.
#   run:  CONV_SHAPES=s1.3x3,... bash gpu/conv/run_explore_h200.sh [TIMING_BUDGET_S]
set -uo pipefail
BUDGET=${1:-150}
OUT=${OUT:-/tmp/conv}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1 CONV_TRAIN_PARTS=1 CONV_PRECOMPILE_KINDS=fwd,dgrad,wgrad
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
export PYTHONPATH=/tmp/site:$PWD
check() {  # $1: log name, $2: -k expression, $3: shard
  TRITONIFY_CONV_CONFIG_FLAG=A_TMA TRITONIFY_CONV_CONFIG_SHARD=$3 TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1 \
    TRITONIFY_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -p no:cacheprovider -o addopts="" -rf \
    tests/templates/kernel_checks.py -k "$2" > "$OUT/$1.log" 2>&1; echo "rc=$?" >> "$OUT/$1.log"
}
for i in 0 1 2; do check "checks_atma_$i" "conv2d_every_autotune_config" "$i/3" & done
check checks_backward "conv2d_backward_through or conv2d_forward_dgrad_wgrad" "" &
timeout 150 python3 gpu/conv/bench.py "$OUT" --precompile-only --workers 10 > "$OUT/precompile.log" 2>&1
wait
for f in "$OUT"/checks_*.log; do echo "$f: $(tail -n 2 "$f" | tr '\n' ' ')"; done
python3 gpu/conv/bench.py "$OUT" --no-precompile --budget "$BUDGET" --sections fwd,train --rep-ms 20 > "$OUT/bench.log" 2>&1
echo "bench rc=$?"; tail -n 3 "$OUT/bench.log"
python3 gpu/conv/report.py "$OUT/conv.jsonl" || true
