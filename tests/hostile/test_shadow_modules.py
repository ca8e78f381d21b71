"""A workspace whose root holds modules named like the ones the server imports (issue 31).

`pygls.py`, `attrs.py`, `lsprotocol.py`, a stdlib name (`pickle.py`) and a `tritonify/` package, each
writing a marker file when imported. The server is started as editors start it, with the workspace
as its working directory: the extension's command line (its entry script, and its preflight), the
`tritonify server` console script, `python -P -m tritonify server` (docs/editors.md) and plain
`python -m tritonify server` (which cannot keep a workspace `tritonify/` out, so that one case has
no such package). It opens a kernel, trusted and not: no marker may appear, and the lint still finds
the kernel's TRI001 (before the fix the lint worker, `-m` from the workspace, imported `pickle.py`
and died: "analysis process died").
"""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.rawclient import RawClient

ROOT = Path(__file__).resolve().parents[2]
KERNEL = (ROOT / "tests" / "cli" / "project" / "kernels.py").read_text()   # TRI001 on line 12
ENTRY = ROOT / "bundled" / "tool" / "tritonify_server.py"
SHADOWS = ("pygls", "attrs", "lsprotocol", "pickle", "tritonify")
TRITON = importlib.util.find_spec("triton") is not None   # then the compile worker is checked too


def marker_code(name: str, up: int = 0) -> str:
    folder = "os.path.dirname(" * (up + 1) + "os.path.abspath(__file__)" + ")" * (up + 1)
    return f"import os\nopen(os.path.join({folder}, 'MARKER_{name}'), 'w').write('imported')\n"


def workspace(tmp_path: Path, shadows=SHADOWS) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    for name in shadows:
        if name == "tritonify":
            (root / "tritonify" / "server").mkdir(parents=True)
            (root / "tritonify" / "__init__.py").write_text(marker_code("tritonify", up=1))
            (root / "tritonify" / "__main__.py").write_text(marker_code("tritonify_main", up=1))
            (root / "tritonify" / "server" / "__init__.py").write_text(marker_code("tritonify_server", up=2))
        else:
            (root / f"{name}.py").write_text(marker_code(name))
    (root / "kernels.py").write_text(KERNEL)
    return root


def console_script(tmp_path: Path) -> Path:
    """`tritonify` as pip installs it: a script in bin/ (sys.path[0] is its folder)."""
    installed = Path(sys.executable).parent / "tritonify"
    script = tmp_path / "bin" / "tritonify"
    script.parent.mkdir()
    script.write_text("import re\nimport sys\nfrom tritonify.cli.main import main\nif __name__ == '__main__':\n"
                      "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n    sys.exit(main())\n")
    return installed if installed.is_file() and "tritonify.cli.main" in installed.read_text() else script


def extension_command() -> list[str]:
    """What extension/commandLine.ts starts: the interpreter, the bundle's entry script, `server`."""
    source = (ROOT / "extension" / "commandLine.ts").read_text(encoding="utf-8")
    parts = re.search(r"ENTRY_SCRIPT = \[([^\]]*)\]", source).group(1)
    assert ENTRY.relative_to(ROOT).parts == tuple(p.strip().strip("'\"") for p in parts.split(","))
    assert "inputs.entryScript, 'server'" in source and "'-m'" not in source
    return [sys.executable, str(ENTRY), "server"]


COMMANDS = {
    "extension": lambda tmp: extension_command(),
    "tritonify server": lambda tmp: [sys.executable, str(console_script(tmp)), "server"],
    "python -P -m tritonify server": lambda tmp: [sys.executable, "-P", "-m", "tritonify", "server"],
    "python -m tritonify server": lambda tmp: [sys.executable, "-m", "tritonify", "server"],
}


def markers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith("MARKER"))


@pytest.mark.parametrize("trusted", [False, True])
@pytest.mark.parametrize("how", list(COMMANDS))
def test_the_workspace_modules_never_run_and_the_lint_still_works(tmp_path, how, trusted):
    # `python -m` imports the package `tritonify` from its working directory before any of
    # Tritonify's code runs; only -P (or the console script, or a script of the bundle's) keeps it out
    shadows = tuple(s for s in SHADOWS if s != "tritonify") if how == "python -m tritonify server" else SHADOWS
    root = workspace(tmp_path, shadows)
    uri = (root / "kernels.py").as_uri()
    env = {"TRITONIFY_INSPECT": "1", "TRITONIFY_CACHE_DIR": str(tmp_path / "cache"),
           "TRITON_CACHE_DIR": str(tmp_path / "triton-cache")}
    c = RawClient(command=COMMANDS[how](tmp_path), cwd=root, env=env)
    try:
        c.initialize(root, options={"trusted": trusted, "inspect": {"enabled": True, "target": "sm_90"}},
                     client_name="Neovim")
        c.open(uri, KERNEL)
        found = c.diagnostics(uri, timeout=60)
        codes = [(d["code"], d["range"]["start"]["line"]) for d in found]
        hover = c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 11, "character": 24}})
        if trusted and TRITON:   # the compile worker too (asked for: the only thing that compiles)
            asked = c.request("workspace/executeCommand", {"command": "tritonify.inspect", "arguments": [uri]},
                              timeout=180)["result"]
            assert asked["ok"] is True, asked
        assert c.shutdown_and_exit() == 0
    finally:
        c.kill()
    assert markers(root) == [], f"{how}: the workspace's modules ran"
    assert ("TRI001", 11) in codes, (how, found, c.stderr_lines[-20:])
    assert "error" not in hover


def test_the_extensions_preflight_imports_nothing_of_the_workspace(tmp_path):
    root = workspace(tmp_path)
    checked = subprocess.run([sys.executable, str(ENTRY), "--check"], cwd=root, capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr
    assert markers(root) == []
    assert not checked.stdout.strip().startswith(str(root)), checked.stdout   # the real tritonify was found


def test_a_lint_worker_started_in_the_workspace_imports_none_of_it(tmp_path):
    """The worker's own command line (inherited working directory = the workspace)."""
    from tritonify.server.lint_worker import WORKER_COMMAND

    root = workspace(tmp_path)
    done = subprocess.run(WORKER_COMMAND, cwd=root, input=b"", capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    assert markers(root) == []


def test_the_bootstrap_for_another_interpreter_keeps_the_working_folder_out(tmp_path):
    """`module_command` for an interpreter that is not this one (any version: no -P): the `-c`
    bootstrap drops '' before importing anything, and runs the module as -m would."""
    from tritonify.infra.safe_start import module_command

    root = workspace(tmp_path)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "probe_mod.py").write_text("import sys, pickle\nprint(pickle.__file__, sys.argv[1:])\n")
    argv = module_command("probe_mod", python=str(Path(sys.executable).resolve()) + "", leading=("-X", "utf8"))
    if argv[0] == sys.executable:   # the same path as this interpreter: build the other form by hand
        argv = [sys.executable, "-X", "utf8", "-c", argv[-2], "probe_mod"]
    assert "-c" in argv
    done = subprocess.run([*argv, "a", "b"], cwd=root, capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(tmp_path / "other"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert markers(root) == [] and str(root) not in done.stdout and "['a', 'b']" in done.stdout
