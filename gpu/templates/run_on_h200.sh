#!/usr/bin/env bash
# One device call for the templates: the harness on every template (speed and large-shape correctness),
# then the template correctness checks (forward and backward) on the GPU with the time left.
#   run: bash gpu/templates/run_on_h200.sh TOTAL_S   (carry: .bench_whl, which holds the liger-kernel 0.8.5 wheel)
set -uo pipefail
TOTAL=${1:-230}
START=$(date +%s)
OUT=${OUT:-/tmp/templates_out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1 TRITONIFY_CACHE_DIR=$OUT
if [ -z "${TRITONIFY_SITE_READY:-}" ]; then    # gpu/run_gpu_checks.sh installs once for all its groups
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .bench_whl/*.whl || exit 3
  python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
fi
export PYTHONPATH=/tmp/site:$PWD
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  python3 -c "import sys, torch, triton, importlib.metadata as m; print(sys.version.split()[0], torch.__version__, triton.__version__, m.version('liger-kernel'), torch.cuda.get_device_name())"
} > "$OUT/device_info.txt" 2>&1
cat "$OUT/device_info.txt"
BENCH_BUDGET=$(( TOTAL * 62 / 100 ))
timeout $(( BENCH_BUDGET + 60 )) python3 gpu/templates/h200_bench.py "$BENCH_BUDGET" ${TEMPLATE_NAMES:-} 2>&1 | tee "$OUT/bench.log"
LEFT=$(( TOTAL - ($(date +%s) - START) - 5 ))
if [ "$LEFT" -gt 20 ]; then
  TRITONIFY_TEST_DEVICE=cuda TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1 timeout "$LEFT" \
    python3 -m pytest -v -p no:cacheprovider -o addopts="" tests/templates/kernel_checks.py 2>&1 | tee "$OUT/gpu_checks.log"
else
  echo "no time left for the GPU checks ($LEFT s)" | tee "$OUT/gpu_checks.log"
fi
ls -la "$OUT"
