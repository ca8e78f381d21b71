#!/usr/bin/env bash
# On the H200 machine, from the repository root: make `tritonify` importable from the copied tree,
# then (1) capture every case with the triage collection and compare the CSV and ncu_report
# readers (check_reader.py), (2) time bare / ncu --set full / tritonify profile (turnaround.py),
# (3) the GPU end-to-end tests. Everything lands in $OUT.
set -u
OUT=${OUT:-/tmp/ncu_out}; mkdir -p "$OUT"
source gpu/ncu/importable.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; ncu --version | tail -1;
  python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"; } > "$OUT/env.txt" 2>&1
if [ -z "${SKIP_CHECK:-}" ]; then
  timeout ${CHECK_S:-210} python3 gpu/ncu/check_reader.py 2>&1 | tee "$OUT/check.log" | grep -v "^\s*$" | tail -45
fi
timeout ${TURN_S:-230} python3 gpu/ncu/turnaround.py 2>&1 | tee "$OUT/turnaround.log" | tail -8
timeout ${E2E_S:-150} python3 -m pytest -q -p no:cacheprovider -m gpu tests/ncu/test_gpu_e2e.py -rA 2>&1 | tee "$OUT/e2e.log" | tail -12
cp results/ncu_h200_e2e.json "$OUT/" 2>/dev/null
echo "done"
