#!/usr/bin/env bash
# One device call: the MoE and cross-entropy GPU checks (four pytest processes in parallel: compiling
# is CPU work, the kernels are tiny), then gpu/templates/moe_h200.py's timings, alone on the GPU.
# Run from the tree's root with OUT set; VLLM_MOE_DIR holds the pinned wheel's fused_moe.py and H200
# config JSON (not committed). Usage: bash gpu/templates/run_moe_h200.sh SECONDS
set -u
LIMIT=${1:-420}
START=$(date +%s)
# a site of this run's own (a warm machine may hold another tree's install in device_setup.sh's /tmp/site)
SITE=/tmp/site-moe-$START
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "${WHEEL_DIR:-../whl-moe}"/*.whl || exit 3
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target "$SITE" . || exit 4
export PYTHONPATH=$SITE:$PWD
python3 -c "import tritonify.kernels.templates.moe as m, tritonify.kernels.templates.cross_entropy as c, inspect; assert 'detach' in inspect.getsource(c.CrossEntropyFunction)" || exit 5
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
  python3 -c "import sys, torch, triton, importlib.metadata as md; print(sys.version.split()[0], torch.__version__, triton.__version__, md.version('liger-kernel'))"; } > "$OUT/device.txt" 2>&1
export TRITONIFY_TEST_DEVICE=cuda TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1 TRITONIFY_COMPILE_BACKEND=aot_eager
CHECKS="python3 -m pytest -q -p no:cacheprovider tests/templates/kernel_checks.py"
K1=${CHECKS_1:-"cross_entropy or (moe and not every_autotune and not experts_forward_backward)"}
K2=${CHECKS_2:-"moe_experts_forward_backward"}
K3=${CHECKS_3:-"every_autotune and moe and (config0 or config1 or config2 or config3 or config4)"}
K4=${CHECKS_4:-"every_autotune and moe and (config5 or config6 or config7 or config8 or config9)"}
DONE=/tmp/moe-checks-done-$START
( timeout 240 $CHECKS -k "$K1" > "$OUT/gpu_checks_1.txt" 2>&1 &
  timeout 240 $CHECKS -k "$K2" > "$OUT/gpu_checks_2.txt" 2>&1 &
  timeout 240 $CHECKS -k "$K3" > "$OUT/gpu_checks_3.txt" 2>&1 &
  timeout 240 $CHECKS -k "$K4" > "$OUT/gpu_checks_4.txt" 2>&1 &
  wait; touch "$DONE" ) &
CHECKS_PID=$!
unset TRITONIFY_TEST_DEVICE TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG TRITONIFY_COMPILE_BACKEND
if [ -z "${OVERLAP:-}" ]; then wait "$CHECKS_PID"; fi   # OVERLAP=1: compile the forward cases while the checks run
LEFT=$(( LIMIT - ($(date +%s) - START) - 15 ))
python3 gpu/templates/moe_h200.py "$OUT" --vllm "${VLLM_MOE_DIR:-../vllm-moe}" --budget "$LEFT" ${SECTIONS:+--sections $SECTIONS} \
  ${IMPLS:+--impls $IMPLS} ${CASES:+--cases $CASES} ${OVERLAP:+--warm-first $DONE} ${PIN:+--pin}
wait "$CHECKS_PID"
for f in "$OUT"/gpu_checks_*.txt; do echo "$f: $(tail -1 "$f")"; done
python3 - "$OUT/moe_h200.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("kind") in ("moe_fwd", "moe_train", "ce"):
        t = r.get("graph_us") or r.get("events_us")
        print(r["kind"], r.get("model", r.get("form")), r.get("tokens", ""), r["impl"], t and round(t, 1),
              r.get("events_us") and round(r["events_us"], 1), r.get("error", "")[:80])
PY
