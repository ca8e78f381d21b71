#!/usr/bin/env bash
# One device call: Nsight Compute on the forward layers where the template trails cuDNN most, the template's kernel
# and cuDNN's side by side (gpu/conv/run_layer.py, inside its NVTX range "measure"), each report read back through
# the product's own `tritonify diagnose` (the bottleneck patterns) and a few raw metrics printed for both kernels:
# duration, SM / tensor-pipe / L2 / DRAM throughput, L2 bytes, grid and registers ($OUT: profile_summary.txt,
# diagnose.txt, profile.tgz with the JSON diagnoses and raw CSVs, reports.tgz with the reports if small). Then (PROBE_GEMM_WS=1 by
# default) gpu/conv/probe_gemm.py with the warp-specialized GEMM tiles on the 1x1 layers of LAYERS.
#     run:  bash gpu/conv/run_profile_h200.sh      (LAYERS: "name:batch:path ...", path auto|gemm|implicit|box;
#                                                   NCU_S seconds per capture; PROBE_S for probe_gemm, 0: none)
set -uo pipefail
OUT=${OUT:-/tmp/conv}; W=/tmp/conv_profile; mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
python3 -m pip install -q --upgrade --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
export PYTHONPATH=/tmp/site:$PWD
LAYERS=${LAYERS:-"s4.1x1a:32:gemm s4.3x3:32:auto s3.1x1a:128:gemm s2.down/2:128:auto"}
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader; ncu --version | tail -1
  python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > "$OUT/profile_env.txt" 2>&1
for layer in $LAYERS; do
  IFS=: read -r name batch path <<< "$layer"
  tag=$(echo "${name}_${batch}_${path}" | tr '/.' '__')
  timeout ${NCU_S:-120} ncu --set full --import-source yes --nvtx --nvtx-include "measure/" --target-processes all -f \
    -o "$W/$tag" python3 gpu/conv/run_layer.py "$name" "$batch" "$path" > "$W/$tag.log" 2>&1
  echo "$layer: ncu rc=$? $(grep -h "batch" "$W/$tag.log" | tail -n 1 | cut -c1-200)"
  [ -f "$W/$tag.ncu-rep" ] || continue
  python3 -m tritonify.cli.main diagnose "$W/$tag.ncu-rep" --format json \
    > "$W/diagnose_$tag.json" 2> "$W/$tag.diagnose.err"
  { echo "== $layer"; python3 -m tritonify.cli.main diagnose "$W/$tag.ncu-rep" 2>&1 \
    | head -n 60; } >> "$OUT/diagnose.txt"
  ncu --import "$W/$tag.ncu-rep" --page raw --csv > "$W/$tag.raw.csv" 2>/dev/null
  python3 - "$W/$tag.raw.csv" "$layer" <<'PY' | tee -a "$OUT/profile_summary.txt"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = ["gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
        "lts__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_bytes.sum",
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "launch__grid_size", "launch__registers_per_thread",
        "sm__warps_active.avg.pct_of_peak_sustained_active"]
print(sys.argv[2])
for r in rows[1:]:  # the first row holds the units
    print("  " + r.get("Kernel Name", "?")[:60] + ": " + ", ".join(f"{k.split('.')[0]}={r.get(k, '-')}" for k in want))
PY
done
tar -czf "$OUT/profile.tgz" -C "$W" $(cd "$W" && ls *.json *.csv *.log *.err 2>/dev/null)
tar -czf "$W/reports.tgz" -C "$W" $(cd "$W" && ls *.ncu-rep 2>/dev/null)
[ "$(stat -c %s "$W/reports.tgz")" -lt 15000000 ] && cp "$W/reports.tgz" "$OUT/" || echo "reports.tgz over 15 MB: left on the device"
if [ "${PROBE_S:-200}" -gt 0 ]; then
  GEMM_LAYERS=$(for layer in $LAYERS; do IFS=: read -r name _ _ <<< "$layer"; case $name in *1x1*|*down*) echo -n "$name,";; esac; done)
  PROBE_GEMM_WS=1 PROBE_BATCHES=32,128 CONV_SHAPES=${GEMM_LAYERS%,} timeout ${PROBE_S:-200} \
    python3 gpu/conv/probe_gemm.py "$OUT" > "$OUT/probe_gemm.log" 2>&1
  echo "probe_gemm rc=$?"; grep -c '"what": "gemm"' "$OUT/probe_gemm.jsonl"; grep -h '"error"' "$OUT/probe_gemm.jsonl" | cut -c1-300 | head -5
fi
