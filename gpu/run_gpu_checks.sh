#!/usr/bin/env bash
# One device call for the GPU checks, two independent groups side by side on a 2-GPU host (one after
# the other on a 1-GPU host): templates (speed, then correctness) and the code-lens jobs on GPU 0;
# the inspect-vs-GPU comparison (with ncu), the ncu end-to-end tests and the bench GPU tests on GPU 1;
# two more steps on request (STEPS0/STEPS1): nvml (the one NVML reader on a real GPU), conv (the conv2d float64 checks).
#   run:  bash gpu/run_gpu_checks.sh [TOTAL_S]    (carry: .bench_whl = liger-kernel and the server's wheels)
# Everything kept lands in $OUT: device_info.txt, checks.tgz (logs, JSON, Markdown), one log per group.
set -uo pipefail
TOTAL=${1:-560}
START=$(date +%s)
OUT=${OUT:-/tmp/gpu_checks}; mkdir -p "$OUT"
W=/tmp/gpu_checks_work; rm -rf "$W"; mkdir -p "$W"/{templates,compile,ncu,bench,lsp}
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
SITE=/tmp/site
python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .bench_whl/*.whl || exit 3
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target "$SITE" . || exit 4
export PYTHONPATH=$SITE:$PWD TRITONIFY_SITE_READY=1
{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  python3 -c "import sys, torch, triton, importlib.metadata as m; print(sys.version.split()[0], torch.__version__, triton.__version__, m.version('liger-kernel'), torch.cuda.get_device_name(), torch.cuda.device_count())"
  ncu --version | tail -1
} > "$OUT/device_info.txt" 2>&1
cat "$OUT/device_info.txt"
NGPU=$(python3 -c "import torch; print(torch.cuda.device_count())")
left() { echo $(( TOTAL - ($(date +%s) - START) )); }

# the steps; STEPS0 and STEPS1 choose which run on GPU 0 and GPU 1 (default: all of them)
step_tune()      { timeout 300 python3 gpu/templates/tune.py "$W/templates/tune.json" ${TUNE_NAMES:-} 2>&1 | tee "$W/templates/tune.log"; }
step_templates() { OUT=$W/templates bash gpu/templates/run_on_h200.sh "${TEMPLATES_S:-300}"; }
step_lsp()       { TRITONIFY_GPU_RESULTS=$W/lsp timeout $(( $(left) - 15 )) python3 -m pytest -q -p no:cacheprovider -o addopts="" -rA \
                     tests/server/test_gpu_code_lens_jobs.py 2>&1 | tee "$W/lsp/pytest.log"; }
step_compare()   { timeout $(( $(left) - 20 )) python3 gpu/compile/compare.py --ncu --out "$W/compile/compile_vs_h200" 2>&1 | tee "$W/compile/compare.log"; }
step_ncu()       { TRITONIFY_GPU_RESULTS=$W/ncu timeout 200 python3 -m pytest -q -p no:cacheprovider -o addopts="" -rA -m gpu \
                     tests/ncu/test_gpu_e2e.py 2>&1 | tee "$W/ncu/pytest.log"; cp results/ncu_h200_e2e.json "$W/ncu/" 2>/dev/null; }
step_bench()     { TRITONIFY_GPU_RESULTS=$W/bench timeout $(( $(left) - 15 )) python3 -m pytest -q -p no:cacheprovider -o addopts="" -rA -m gpu \
                     tests/bench 2>&1 | tee "$W/bench/pytest.log"; }
step_nvml()      { timeout 60 python3 -m pytest -q -p no:cacheprovider -o addopts="" -rA -m gpu tests/test_nvml.py 2>&1 | tee "$W/bench/nvml.log"; }
step_conv()      { mkdir -p "$W/conv"; OUT=$W/conv CONV_CHECKS_ONLY=1 bash gpu/conv/run_on_h200.sh "$(left)" fwd conv2d; }
run_steps() { for s in $1; do echo "== $s (t=$(( $(date +%s) - START )) s)"; "step_$s"; done; }
group0() { export CUDA_VISIBLE_DEVICES=0; run_steps "${STEPS0:-templates lsp}"; }
group1() { export CUDA_VISIBLE_DEVICES=$(( NGPU > 1 ? 1 : 0 )); run_steps "${STEPS1:-compare ncu bench}"; }
if [ "$NGPU" -gt 1 ]; then
  group0 > "$OUT/group0.log" 2>&1 &
  group1 > "$OUT/group1.log" 2>&1 &
  wait
else
  group0 > "$OUT/group0.log" 2>&1
  group1 > "$OUT/group1.log" 2>&1
fi
find "$W" -name '*.ncu-rep' -size +4M -delete
tar czf "$OUT/checks.tgz" -C "$W" .
for g in group0 group1; do echo "== $g"; tail -n 8 "$OUT/$g.log"; done
echo "elapsed $(( $(date +%s) - START )) s"; ls -la "$OUT"
