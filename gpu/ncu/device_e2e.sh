#!/usr/bin/env bash
# On the H200 machine, from the repository root: make `tritonify` importable from the copied tree
# (the package maps folders, see setup.py), run the lean capture, then the GPU end-to-end tests.
set -u
OUT=${OUT:-/tmp/ncu_out}; mkdir -p "$OUT"
PKG=/tmp/tritonify_path/tritonify
rm -rf /tmp/tritonify_path && mkdir -p "$PKG"
for f in "$PWD"/tritonify/*; do ln -s "$f" "$PKG/"; done
for d in cli diagnostics references kernels server infra; do ln -s "$PWD/$d" "$PKG/$d"; done
export PYTHONPATH=/tmp/tritonify_path PYTHONUNBUFFERED=1
if [ "${1:-}" != "--e2e-only" ]; then
  timeout 200 python3 gpu/ncu/capture.py --lean 2>&1 | tail -20
fi
timeout 300 python3 -m pytest -q -p no:cacheprovider -m gpu tests/ncu/test_gpu_e2e.py -rA ${E2E_K:+-k "$E2E_K"} 2>&1 | tee "$OUT/e2e.log" | tail -30
cp results/ncu_h200_e2e.json "$OUT/" 2>/dev/null
echo "done"
