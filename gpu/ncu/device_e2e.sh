#!/usr/bin/env bash
# On the H200 machine, from the repository root: make `tritonify` importable from the copied tree
# (the package maps folders, see setup.py), run the lean capture, then the GPU end-to-end tests.
set -u
OUT=${OUT:-/tmp/ncu_out}; mkdir -p "$OUT"
source gpu/ncu/importable.sh
if [ "${1:-}" != "--e2e-only" ]; then
  timeout 200 python3 gpu/ncu/capture.py --lean 2>&1 | tail -20
fi
timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/ncu/test_gpu_e2e.py -rA ${E2E_K:+-k "$E2E_K"} 2>&1 | tee "$OUT/e2e.log" | tail -30
cp results/ncu_h200_e2e.json "$OUT/" 2>/dev/null
echo "done"
