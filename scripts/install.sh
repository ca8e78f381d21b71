#!/usr/bin/env bash
# Install Tritonify and everything its tests need into ./.venv (idempotent).
# torch is pinned to the CPU wheel (2.13.0) so CI never pulls a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
python -m pip install -q "torch==2.13.0" 2>&1 | grep -v "^WARNING: Location" || true
python -m pip install -q -e ".[gpu,dev]" --config-settings editable_mode=strict 2>&1 | grep -v "^WARNING: Location" || true
python -c "import tritonify, torch, triton, pygls; print('installed: tritonify', tritonify.__version__, '| torch', torch.__version__, '| triton', triton.__version__)"
