#!/usr/bin/env bash
# The whole test suite on a fresh machine: install into .venv, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
. .venv/bin/activate
# The VS Code extension: its TypeScript unit tests (the real-editor test runs under pytest, marked e2e).
npm ci --no-audit --no-fund
npm test
python -m pytest -q tests
