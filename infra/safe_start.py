"""How Tritonify starts Python with no workspace folder on `sys.path` (issue 31).

`python -m MODULE` puts the working directory first on `sys.path`, and `python -c CODE` puts `''`
(the same folder), ahead of the installed libraries. A server or a worker started in a workspace
would then import the workspace's `pickle.py`, `pygls.py`, `attrs.py` or `tritonify/` package in
place of the real ones, and run it, before any file is opened (in an untrusted workspace too); a
project that merely has its own `pickle.py` would kill the lint worker.

* `module_command(module)` is the one way Tritonify starts a Python module in a child: `-P`
  (Python 3.11+, no such entry) with this interpreter, else a `-c` bootstrap that removes `''`
  before it imports anything but `sys` (the interpreter may be another one, of any version);
* `drop_working_folder()` is what the `__main__` modules call first: started as `python -m
  tritonify ...` from a workspace, they stop the folder from reaching the imports still to come
  (the safe command lines are `tritonify server` and `python -P -m tritonify server`, docs/editors.md).

Imports nothing of Tritonify (infra).
"""
from __future__ import annotations

import os
import sys

# Python 3.11+ has `-P` (sys.flags.safe_path): no folder of the caller's is put on sys.path.
HAS_SAFE_PATH = sys.version_info >= (3, 11)
# For an interpreter whose version is not known (the user's `interpreter` setting): drop every ''
# entry with nothing imported yet but `sys`, then run the module as `-m` would (argv[1] is its name).
BOOTSTRAP = ("import sys; sys.path[:] = [p for p in sys.path if p != '']; import runpy; "
             "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)")


def module_command(module: str, python: str | None = None, *, leading: tuple[str, ...] = ()) -> list[str]:
    """The argv that runs `python -m module` with no workspace folder on sys.path; arguments of the
    module follow it. `leading` are interpreter options (`-X dev`) that go before the module."""
    if python is None or python == sys.executable:
        if HAS_SAFE_PATH:
            return [sys.executable, *leading, "-P", "-m", module]
        python = sys.executable
    return [python, *leading, "-c", BOOTSTRAP, module]


def drop_working_folder() -> None:
    """Remove the folder `python -m` or `python -c` put first on sys.path (unless `-P` already kept
    it off): what this process imports from now on comes from the installed libraries."""
    if getattr(sys.flags, "safe_path", False) or not sys.path:
        return
    try:
        cwd = os.getcwd()
    except OSError:   # the working directory was removed: '' finds nothing there
        cwd = None
    if sys.path[0] == "" or (cwd is not None and sys.path[0] == cwd):
        del sys.path[0]
