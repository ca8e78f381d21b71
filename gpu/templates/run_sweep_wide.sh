#!/usr/bin/env bash
# One device call: gpu/templates/sweep_wide.py (candidate wide-row kernels checked against float64, then
# timed beside the template, Liger and torch.compile, interleaved). Carry .bench_whl.
#   run:  bash gpu/templates/run_sweep_wide.sh [BUDGET_S] [REPS]
set -uo pipefail
BUDGET=${1:-240}; REPS=${2:-7}
OUT=${OUT:-/tmp/sweep}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .bench_whl/*.whl || exit 3
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
export PYTHONPATH=/tmp/site:$PWD
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv; } > "$OUT/device.txt" 2>&1
python3 gpu/templates/sweep_wide.py "$OUT" --budget "$BUDGET" --reps "$REPS" 2>&1 | tee "$OUT/sweep.log" | grep -v "^check .*'ok': True"
