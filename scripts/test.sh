#!/usr/bin/env bash
# The whole test suite on a fresh machine: install into .venv, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
. .venv/bin/activate
python -m pytest -q tests
