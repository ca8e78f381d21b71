#!/usr/bin/env bash
# The whole test suite on a fresh machine: install into .venv, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
# The real-editor tests' prerequisites (node@24, code-server, playwright-core under .e2e/: minutes of
# download the first time, nothing once there) install in the background meanwhile; scripts/e2e.sh
# holds .e2e/lock while it installs, so the e2e tests wait for this one instead of installing again,
# and install (or skip with the reason) themselves if it failed.
mkdir -p .e2e
E2E_INSTALL_ONLY=1 bash scripts/e2e.sh >.e2e/prefetch.log 2>&1 &
bash scripts/install.sh
. .venv/bin/activate
# The VS Code extension: its TypeScript unit tests (the real-editor test runs under pytest, marked e2e).
npm ci --no-audit --no-fund
npm test
python -m pytest -q tests
