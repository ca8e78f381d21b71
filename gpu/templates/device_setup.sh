# Sourced by the template device scripts, from the repository root, with OUT set: install the carried
# liger-kernel wheel (.bench_whl) and this tree into /tmp/site, put them on PYTHONPATH, and record the
# device, its clocks and the versions in $OUT/device.txt. A failed install exits the script (3 or 4).
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .bench_whl/*.whl || exit 3
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
export PYTHONPATH=/tmp/site:$PWD
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv
  python3 -c "import sys, torch, triton, importlib.metadata as md; print(sys.version.split()[0], torch.__version__, triton.__version__, md.version('liger-kernel'))"; } > "$OUT/device.txt" 2>&1
