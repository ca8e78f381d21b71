#!/usr/bin/env bash
# On the H200 machine, from the repository root: make `tritonify` importable from the copied tree,
# capture the reader's warm-up report (into the tree, and $OUT to commit), check one profile end
# to end, time bare / tritonify profile / ncu --set full (turnaround.py), then the GPU e2e tests.
set -u
OUT=${OUT:-/tmp/ncu_out}; mkdir -p "$OUT"
source gpu/ncu/importable.sh
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1; nproc;
  python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"; ncu --help | grep -A2 -- "--kill"
if [ ! -f tools/ncu/sass_warmup.ncu-rep ]; then
  python3 gpu/ncu/warmup_report.py tools/ncu/sass_warmup.ncu-rep 2>&1 | tail -3
fi
cp tools/ncu/sass_warmup.ncu-rep "$OUT/" 2>/dev/null
mkdir -p /tmp/sanity && python3 -m tritonify profile gpu/ncu/planted_triton.py::planted_c_uncoalesced --nvtx-range tritonify \
  --format json -o /tmp/sanity/c -- python3 gpu/ncu/run_cases.py --only planted_c_uncoalesced > /tmp/sanity/out.json 2>/tmp/sanity/err.txt
echo "sanity rc=$?"; python3 -c "import json; d=json.load(open('/tmp/sanity/out.json')); print(d.get('summary'), d.get('error'), d.get('message'))"
cat /tmp/sanity/c.json | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['timings'], d['warnings'], d['ncu_argv'][:14])"
tail -3 /tmp/sanity/err.txt
timeout ${TURN_S:-330} python3 gpu/ncu/turnaround.py 2>&1 | tee "$OUT/turnaround.log" | grep -v "^\s*$" | tail -40
timeout ${E2E_S:-140} python3 -m pytest -q -p no:cacheprovider -m gpu tests/ncu/test_gpu_e2e.py -rA 2>&1 | tee "$OUT/e2e.log" | tail -12
cp results/ncu_h200_e2e.json "$OUT/" 2>/dev/null
echo "done"
