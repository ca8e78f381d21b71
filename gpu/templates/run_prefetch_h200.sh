#!/usr/bin/env bash
# One device call: sweep_wide.py's groups (the template's call and forced configs, checked against float64
# and timed beside Liger and torch.compile, interleaved; the 18:03Z and 18:06Z calls timed the candidate
# kernels of gpu/templates/prefetch_candidates.py at b27c1e5 this way), then ncu's
# launch and occupancy metrics for one call of each chosen implementation. Carry .bench_whl.
#   run:  bash gpu/templates/run_prefetch_h200.sh [SWEEP_BUDGET_S] [GROUPS] [NCU_PLAN...]
set -uo pipefail
BUDGET=${1:-200}; GROUPS_=${2:-}; shift 2 2>/dev/null || shift $#
OUT=${OUT:-/tmp/pf}; mkdir -p "$OUT"; T0=$(date +%s)
source gpu/templates/device_setup.sh
timeout $(( BUDGET + 120 )) python3 gpu/templates/sweep_wide.py "$OUT" --budget "$BUDGET" --reps 5 --groups "$GROUPS_" > "$OUT/sweep.log" 2>&1
echo "sweep rc=$? at $(( $(date +%s) - T0 )) s"; grep -E "^autotuner|'ok': False|Error" "$OUT/sweep.log" | head -20; cat "$OUT/sweep.md" 2>/dev/null
if [ "$#" -gt 0 ]; then
  M=launch__registers_per_thread,launch__occupancy_limit_registers,launch__grid_size,launch__block_size,launch__waves_per_multiprocessor
  M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum
  M=$M,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct
  timeout 200 ncu --profile-from-start off --metrics "$M" --csv python3 gpu/templates/ncu_rows.py "$@" > "$OUT/ncu_rows.csv" 2> "$OUT/ncu_rows.err"
  echo "ncu rc=$?"; grep -E "^profiled" "$OUT/ncu_rows.csv"
  python3 - "$OUT/ncu_rows.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head, body = rows[0], rows[1:]
ix = {k: head.index(k) for k in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
by = collections.OrderedDict()
for r in body:
    by.setdefault((r[ix["ID"]], r[ix["Kernel Name"]][:40]), {})[r[ix["Metric Name"]]] = r[ix["Metric Value"]]
for (i, name), m in by.items():
    print(i, name, {k.split("__", 1)[1][:34]: v for k, v in sorted(m.items())})
PY
fi
echo "elapsed $(( $(date +%s) - T0 )) s"
