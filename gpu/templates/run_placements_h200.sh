#!/usr/bin/env bash
# One device call: the forwards that tie at the copy ceiling, each repetition on fresh inputs at a new
# placement (gpu/templates/sweep_wide.py --fresh-inputs), under the three-way table's timer
# (triton.testing.do_bench_cudagraph) and the sweep's own graph timer. Carry .bench_whl.
#   run:  bash gpu/templates/run_placements_h200.sh [BUDGET_S] [REPS] [GROUPS]
set -uo pipefail
BUDGET=${1:-200}; REPS=${2:-10}; GROUPS_=${3:-"add_rms_norm_fwd,rms_norm_fwd,softmax_fwd 16384"}
OUT=${OUT:-/tmp/placements}; mkdir -p "$OUT"; T0=$(date +%s)
source gpu/templates/device_setup.sh
timeout $(( BUDGET + 90 )) python3 gpu/templates/sweep_wide.py "$OUT" --budget "$BUDGET" --reps "$REPS" --groups "$GROUPS_" \
  --timers triton,graph --fresh-inputs > "$OUT/sweep.log" 2>&1
echo "sweep rc=$?"; grep -E "^autotuner|'ok': False|Error" "$OUT/sweep.log" | head; cat "$OUT/sweep.md" 2>/dev/null
echo "elapsed $(( $(date +%s) - T0 )) s"
