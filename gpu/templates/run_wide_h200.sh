#!/usr/bin/env bash
# One device call for the wide-row templates (softmax, RMSNorm, add+RMSNorm): their GPU checks (every
# autotune config of the row kernels forced and checked against float64, the launcher's short path,
# torch.compile without a graph break), the three-way table at the large shapes, then
# gpu/templates/sweep_wide.py (the template beside some of its kernel's configs forced, Liger and
# torch.compile, interleaved repetitions), and with TIMERS_GROUP set that group under three timers.
# Carry .bench_whl.
#   run:  [TIMERS_GROUP=add_rms_norm_fwd] bash gpu/templates/run_wide_h200.sh [TOTAL_S]
set -uo pipefail
TOTAL=${1:-330}; T0=$(date +%s)
left() { echo $(( TOTAL - ($(date +%s) - T0) )); }
OUT=${OUT:-/tmp/wide}; mkdir -p "$OUT"
source gpu/templates/device_setup.sh
TRITONIFY_TEST_DEVICE=cuda TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1 TRITONIFY_COMPILE_BACKEND=aot_eager timeout 170 \
  python3 -m pytest -q -p no:cacheprovider -o addopts="" tests/templates/kernel_checks.py \
  -k "rms_norm or softmax" > "$OUT/gpu_checks.log" 2>&1
rc=$?; echo "gpu checks rc=$rc" >> "$OUT/gpu_checks.log"; tail -n 3 "$OUT/gpu_checks.log"
if [ "$rc" -ne 0 ]; then grep -E "^E |FAILED" "$OUT/gpu_checks.log" | head -30; exit 5; fi
B=$(( $(left) - 110 )); [ "$B" -gt 170 ] && B=170
timeout $(( B + 20 )) python3 gpu/templates/three_way.py "$OUT" --budget "$B" --sections table --only rms_norm,softmax,add_rms_norm \
  --shapes rms_norm=4096x14336+16384x4096,softmax=4096x11008+16384x4096,add_rms_norm=4096x5120+16384x4096 > "$OUT/three_way.log" 2>&1
python3 gpu/templates/three_way.py --markdown "$OUT/three_way.jsonl" "$OUT/three_way.md"
grep -c . "$OUT/three_way.jsonl"; tail -n 2 "$OUT/three_way.log"
T=$(( $(left) - 10 )); [ "$T" -gt 150 ] && T=150; [ "$T" -gt 30 ] && timeout "$T" python3 gpu/templates/sweep_wide.py "$OUT" --budget $(( T - 25 )) --reps 5 > "$OUT/sweep.log" 2>&1
grep -E "^autotuner|'ok': False" "$OUT/sweep.log"; cat "$OUT/sweep.md" 2>/dev/null
# the three timers side by side on the group where they disagreed (add+RMSNorm 4096x5120, Liger)
if [ -n "${TIMERS_GROUP:-}" ] && [ "$(left)" -gt 40 ]; then
  mkdir -p "$OUT/timers"; T=$(( $(left) - 5 ))
  timeout "$T" python3 gpu/templates/sweep_wide.py "$OUT/timers" --budget $(( T - 20 )) --reps 3 --groups "$TIMERS_GROUP" \
    --timers graph,graph1000,triton > "$OUT/timers/sweep.log" 2>&1
  cat "$OUT/timers/sweep.md" 2>/dev/null
fi
echo "elapsed $(( $(date +%s) - T0 )) s"
