#!/usr/bin/env bash
# The real editor's typing latency on fla's 815-line parallax kernels (issue 31): scripts/e2e.sh's
# editor (the built .vsix in code-server, trusted), driven by tests/e2e/typing_latency.js (which
# loads the machine to a load average of 2 or more while typing, unless E2E_NO_LOAD=1).
# typing-latency.json lands in .e2e/run/trusted/.
set -euo pipefail
cd "$(dirname "$0")/.."
E2E_DRIVER=typing_latency.js E2E_MODES=trusted exec bash scripts/e2e.sh
