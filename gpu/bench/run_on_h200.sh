#!/usr/bin/env bash
# One device call: install, GPU tests of the bench harness, then `tritonify bench` on the example kernel
# against eager, torch.compile and Liger-Kernel. Everything worth keeping lands in $OUT (8 files at most).
#   run: bash gpu/bench/run_on_h200.sh     (carry: .bench_whl, which holds liger_kernel-0.8.5-py3-none-any.whl)
set -uo pipefail
OUT=${OUT:-/tmp/bench_out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
SITE=/tmp/site
python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .bench_whl/*.whl || exit 3
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target "$SITE" . || exit 4
export PYTHONPATH=$SITE
export TRITONIFY_CACHE_DIR=$OUT TRITONIFY_GPU_RESULTS=$OUT
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  python3 -c "import sys, torch, triton, liger_kernel, importlib.metadata as m; print(sys.version.split()[0], torch.__version__, triton.__version__, m.version('liger-kernel'), torch.cuda.get_device_name())"
} > "$OUT/device_info.txt" 2>&1
cat "$OUT/device_info.txt"
# GPU tests (the first one runs `tritonify bench` and keeps its JSON in $OUT)
timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/bench -o addopts="" 2>&1 | tee "$OUT/pytest_gpu.log"
# The human-readable report, the HTML/PNG for the editor, the lineage record
timeout 150 python3 -m tritonify bench examples/bench/rmsnorm.py::rmsnorm_kernel --baselines eager,compile,liger,torch_rms_norm \
  --format table --report-dir "$OUT" --lineage "$OUT/candidates.jsonl" 2>&1 | tee "$OUT/bench_table.txt"
ls -la "$OUT"
