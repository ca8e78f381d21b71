#!/bin/sh
# The interpreter the typing-latency floor run gives the extension (benchmarks/e2e_floor_server.py):
# the extension's preflight (`--check`) passes, its server start runs the floor server instead.
here=$(cd "$(dirname "$0")" && pwd)
python=$(python3 -c 'import sys; print(getattr(sys, "_base_executable", "") or sys.executable)')
case " $* " in
  *" --check "*) exit 0 ;;
  *" server"*) exec "$python" "$here/e2e_floor_server.py" ;;
esac
exec "$python" "$@"
