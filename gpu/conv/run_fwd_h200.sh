#!/usr/bin/env bash
# A short device call for the conv2d forward alone (after a change to its configs or launch path): every
# forward config's float64 checks in four parallel pytest shards while bench.py compiles the forward's
# configs for every ResNet-50 key, then the forward timings (bench.py --sections fwd).
#   run:  bash gpu/conv/run_fwd_h200.sh [TIMING_BUDGET_S]
set -uo pipefail
BUDGET=${1:-55}
OUT=${OUT:-/tmp/conv}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
export PYTHONPATH=/tmp/site:$PWD
for i in 0 1 2 3; do
  (TRITONIFY_CONV_CONFIG_SHARD=$i/4 TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1 TRITONIFY_TEST_DEVICE=cuda timeout 120 \
     python3 -m pytest -q -p no:cacheprovider -o addopts="" -rf tests/templates/kernel_checks.py \
     -k "conv2d_every_autotune_config and fwd" > "$OUT/checks_fwd_$i.log" 2>&1; echo "rc=$?" >> "$OUT/checks_fwd_$i.log") &
done
CONV_PRECOMPILE_KINDS=fwd timeout 120 python3 gpu/conv/bench.py "$OUT" --precompile-only --workers 10 > "$OUT/precompile.log" 2>&1
wait
for f in "$OUT"/checks_fwd_*.log; do echo "$f: $(tail -n 2 "$f" | tr '\n' ' ')"; done
python3 gpu/conv/bench.py "$OUT" --no-precompile --budget "$BUDGET" --sections fwd --rep-ms 20 > "$OUT/bench.log" 2>&1
echo "bench rc=$?"; python3 gpu/conv/report.py "$OUT/conv.jsonl" || true
