#!/usr/bin/env bash
# One device call for the row templates' wide-row misses (RMSNorm 4096x14336, softmax 4096x11008,
# add+RMSNorm 4096x5120): their GPU checks on the first config, the three-way table limited to those
# templates and shapes (plus one other shape each) beside Liger and torch.compile, then every autotune
# config of the wide-row kernels forced, checked against float64 and timed. Carry .bench_whl.
#   run:  bash gpu/templates/run_rows_h200.sh [TOTAL_S]
set -uo pipefail
TOTAL=${1:-300}; T0=$(date +%s)
left() { echo $(( TOTAL - ($(date +%s) - T0) )); }
OUT=${OUT:-/tmp/rows}; mkdir -p "$OUT"
source gpu/templates/device_setup.sh
TRITONIFY_TEST_DEVICE=cuda TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1 TRITONIFY_COMPILE_BACKEND=aot_eager timeout 90 \
  python3 -m pytest -q -p no:cacheprovider -o addopts="" tests/templates/kernel_checks.py \
  -k "(rms_norm or softmax or persistent or without_gradient or contract) and not every_autotune" > "$OUT/gpu_checks.log" 2>&1
rc=$?; echo "gpu checks rc=$rc" >> "$OUT/gpu_checks.log"; tail -n 3 "$OUT/gpu_checks.log"
if [ "$rc" -ne 0 ]; then grep -E "^E |FAILED" "$OUT/gpu_checks.log" | head -30; exit 5; fi
B=$(( $(left) - 75 )); [ "$B" -gt 200 ] && B=200
timeout $(( B + 20 )) python3 gpu/templates/three_way.py "$OUT" --budget "$B" --sections table --only rms_norm,softmax,add_rms_norm \
  --shapes rms_norm=4096x14336+16384x4096,softmax=4096x11008+16384x4096,add_rms_norm=4096x5120+16384x4096 > "$OUT/three_way.log" 2>&1
python3 gpu/templates/three_way.py --markdown "$OUT/three_way.jsonl" "$OUT/three_way.md"
grep -c . "$OUT/three_way.jsonl"; tail -n 2 "$OUT/three_way.log"
T=$(( $(left) - 10 )); [ "$T" -gt 20 ] && timeout "$T" python3 gpu/templates/tune_rows.py "$OUT/tune_rows.json" $(( T - 15 )) > "$OUT/tune_rows.log" 2>&1
tail -n 2 "$OUT/tune_rows.log"; echo "elapsed $(( $(date +%s) - T0 )) s"
