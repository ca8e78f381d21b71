#!/usr/bin/env bash
# On the H200 machine, from the repository root: make `tritonify` importable from the copied tree
# (as device_round3.sh does), then split `tritonify profile`'s time phase by phase (turnaround_probe.py).
set -u
OUT=${OUT:-/tmp/ncu_out}; mkdir -p "$OUT"
source gpu/ncu/importable.sh
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1; nproc;
  python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"; echo "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-}"; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
python3 -c "import tritonify.cli.main, tritonify.tools.ncu.profile_run; print('import ok')"
if [ -n "${READER_PROBE:-}" ]; then
  timeout 200 python3 gpu/ncu/reader_probe.py 2>&1 | tee "$OUT/reader_probe.log" | tail -80
fi
timeout ${PROBE_S:-400} python3 gpu/ncu/turnaround_probe.py 2>&1 | tee "$OUT/probe.log" | tail -60
echo done
