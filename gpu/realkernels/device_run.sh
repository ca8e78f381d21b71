#!/usr/bin/env bash
# One device call for the real kernels, from the tree's root with OUT set and the carried sources at
# $RK_SRC (benchmarks/realkernels/sources.py): install Liger-Kernel 0.8.5, capture every real kernel
# with `ncu --set full` in one process (gpu/realkernels/run.py profile), export its pages, profile one
# kernel the way a user does (`tritonify profile`), then check and time originals, baselines and
# candidates within the time left. Usage: bash gpu/realkernels/device_run.sh SECONDS [ONLY]
set -u
LIMIT=${1:-560}   # PROFILE_ONLY / PROFILE_WITH / BENCH_ONLY: comma lists of launchers / candidates
START=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - START) )); }
SITE=/tmp/site-rk
python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$RK_SRC"/whl/*.whl || exit 3
source gpu/ncu/importable.sh
export PYTHONPATH=$SITE:$PWD:$PYTHONPATH RK_SRC PYTHONUNBUFFERED=1 RK_PATCH_DIR=/tmp/rk-fixed
W=/tmp/rk-work; rm -rf "$W"; mkdir -p "$W/pages/source"
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
  python3 -c "import sys, torch, triton, importlib.metadata as md; print(sys.version.split()[0], torch.__version__, triton.__version__, md.version('liger-kernel'))"
  ncu --version | tail -1; } > "$W/device.txt" 2>&1
if [ -z "${SKIP_PROFILE:-}" ]; then
  T0=$(date +%s)
  timeout $(( $(left) - 200 )) ncu --set full --import-source yes --clock-control none --nvtx --nvtx-include tritonify/ \
    --target-processes application-only -k 'regex:^(_|liger|triton_)' -f -o "$W/rk" \
    python3 gpu/realkernels/run.py profile ${PROFILE_ONLY:+--only $PROFILE_ONLY} ${PROFILE_WITH:+--with $PROFILE_WITH} > "$W/ncu.log" 2>&1
  echo "capture rc=$? in $(( $(date +%s) - T0 )) s"; grep -c "^profiled" "$W/ncu.log"; grep -A3 FAILED "$W/ncu.log" | head -20
  python3 - "$W" <<'PY'
import sys, pathlib
from tritonify.tools.ncu.ncu_tool import export_pages
w = pathlib.Path(sys.argv[1])
raw, details, sources = export_pages(str(w / "rk.ncu-rep"))
(w / "pages/raw.csv").write_text(raw); (w / "pages/details.csv").write_text(details)
for i, s in enumerate(sources):
    name = next((l.split(",", 1)[1].strip().strip('"') for l in s.splitlines()[:6] if l.startswith('"Function Name"')), f"k{i}")
    (w / f"pages/source/{name[:80]}.csv").write_text(s)
print("exported", len(sources), "source pages")
PY
  python3 -m tritonify diagnose "$W/rk.ncu-rep" --format text > "$W/diagnose.txt" 2>&1; echo "diagnose rc=$?"
  # the generated Inductor kernels' source, as the report names it
  grep -rl "@triton.jit" /tmp/torchinductor_root 2>/dev/null | grep "\.py$" | tar czf "$W/inductor_src.tgz" -T - 2>/dev/null
fi
if [ -n "${USER_PROFILE:-}" ]; then   # what a user runs: one kernel, the default (triage) collection
  timeout 90 python3 -m tritonify profile "$SITE/liger_kernel/ops/rms_norm.py::_rms_norm_backward_kernel" --format text \
    -o "$W/user" -- python3 gpu/realkernels/run.py profile --only rms_norm_bwd > "$W/user_profile.txt" 2>&1; echo "user profile rc=$?"
fi
B=$(( $(left) - 30 ))
echo "bench budget $B s"
timeout $(( B + 25 )) python3 gpu/realkernels/run.py bench "$W" ${BENCH_ONLY:+--only $BENCH_ONLY} --budget "$B" 2> "$W/bench.err" | tee "$W/bench.txt"
tail -5 "$W/bench.err"
rm -f "$W/user/"*.ncu-rep 2>/dev/null
cp -r /tmp/rk-fixed "$W/fixed" 2>/dev/null
tar czf "$OUT/rk.tgz" -C "$W" pages device.txt ncu.log diagnose.txt bench.jsonl bench.txt bench.err user_profile.txt fixed 2>/dev/null
cp "$W/inductor_src.tgz" "$OUT/" 2>/dev/null
[ -f "$W/rk.ncu-rep" ] && [ $(stat -c %s "$W/rk.ncu-rep") -lt 15000000 ] && cp "$W/rk.ncu-rep" "$OUT/"
ls -la "$OUT"; echo "total $(( $(date +%s) - START )) s"
