#!/usr/bin/env bash
# One device call: the templates' GPU checks (correctness, launcher short path, torch.compile without a
# graph break), the bench harness's GPU test, then gpu/templates/three_way.py. Carry .bench_whl.
#   run:  [ONLY=rms_norm,softmax] bash gpu/templates/run_three_way.sh [THREE_WAY_BUDGET_S] [CHECKS_S] [SECTIONS]
set -uo pipefail
BUDGET=${1:-300}; CHECKS=${2:-170}; SECTIONS=${3:-ce,host,table}
OUT=${OUT:-/tmp/three_way}; mkdir -p "$OUT"
source gpu/templates/device_setup.sh
if [ "$CHECKS" -gt 0 ]; then
  TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1 TRITONIFY_COMPILE_BACKEND=${COMPILE_BACKEND:-aot_eager} timeout "$CHECKS" python3 -m pytest -q -p no:cacheprovider -o addopts="" -rA -m gpu \
    ${CHECK_TESTS:-tests/templates/test_kernels.py tests/bench/test_gpu_bench.py} -k "every_template or example_kernel" > "$OUT/gpu_checks.log" 2>&1
  rc=$?; echo "gpu checks rc=$rc" >> "$OUT/gpu_checks.log"; tail -n 5 "$OUT/gpu_checks.log"
  # a failing check: stop here, so a broken launcher costs the checks' time and not the benchmark's
  if [ "$rc" -ne 0 ] && [ "${STOP_ON_FAIL:-1}" = 1 ]; then grep -E "^E |FAILED" "$OUT/gpu_checks.log" | head -40; exit 5; fi
fi
python3 gpu/templates/three_way.py "$OUT" --budget "$BUDGET" --sections "$SECTIONS" --only "${ONLY:-}" > "$OUT/three_way.log" 2>&1
python3 gpu/templates/three_way.py --markdown "$OUT/three_way.jsonl" "$OUT/three_way.md"
grep -c . "$OUT/three_way.jsonl"; tail -n 3 "$OUT/three_way.log"
