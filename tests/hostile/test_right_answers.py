"""Wrong answers the attacks of issue 31 found, through the CLI and a real server.

- a file that cannot be parsed passed under `--select TRI001` ("All checks passed"): TRI000 is
  not a rule, and no selection hides it (ruff reports syntax errors under any selection);
- a malformed `pyproject.toml` made the server stop linting its folder with no diagnostic, and
  deeply nested inline tables gave an internal RecursionError: now a diagnostic on the line the
  parser names, and linting goes on with the defaults.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.rawclient import RawClient

KERNEL = (Path(__file__).resolve().parents[1] / "cli" / "project" / "kernels.py").read_text()   # TRI001 on line 12
BROKEN = KERNEL.replace("tl.store(y_ptr + offs, x, mask=mask)", "tl.store(y_ptr + offs, x, mask=mask")


def tritonify(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "tritonify", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


# ---- a file that cannot be parsed never passes ------------------------------------------------------

@pytest.mark.parametrize("flags", [["--select", "TRI001"], ["--select", "CUD"], ["--select", "TRI001", "--ignore", "TRI001"],
                                   ["--ignore", "TRI000"], []])
def test_a_file_that_cannot_be_parsed_never_passes_whatever_is_selected(tmp_path, flags):
    f = tmp_path / "k.py"
    f.write_text(BROKEN)
    r = tritonify("check", str(f), *flags)
    assert "All checks passed" not in r.stdout
    assert f"{f}:14:" in r.stdout and "TRI000 SyntaxError" in r.stdout, r.stdout
    assert r.returncode == 1


def test_the_server_reports_the_syntax_error_under_a_selection(tmp_path):
    """Under a selection the server reports the syntax error on its line, as the CLI does; and, since
    the server lints the statements that still parse (typing without flicker, issue 31), the selected
    rule's finding above it stays (TRI001 on line 12). The CLI, which can fix files, reports the syntax
    error alone: no fix is offered for a file that does not parse."""
    path = tmp_path / "k.py"
    path.write_text(BROKEN)
    c = RawClient()
    try:
        c.initialize(tmp_path, options={"lint": {"select": ["TRI001"]}})
        c.open(path.as_uri(), BROKEN)
        found = c.diagnostics(path.as_uri(), timeout=60)
        assert c.shutdown_and_exit() == 0
    finally:
        c.kill()
    assert [(d["code"], d["range"]["start"]["line"]) for d in found] == [("TRI001", 11), ("TRI000", 13)], found


# ---- a bad pyproject.toml -----------------------------------------------------------------------------

DEEP = "x = " + "{a = " * 5000 + "1" + " }" * 5000
BAD_CONFIGS = {
    # name: (the file, the 0-based line its diagnostic must be on)
    "unclosed array": ("[tool.tritonify]\nselect = [\n", 1),
    "bad value": ("[project]\nname = 'x'\n\n[tool.tritonify]\nselect = [\"TRI001\"]\nignore = nope\n", 5),
    "deep inline tables": (f"[tool.tritonify]\n{DEEP}\n", 1),
    "deep arrays": ("[tool.tritonify]\n\nselect = " + "[" * 5000 + "]" * 5000 + "\n", 2),
}


@pytest.mark.parametrize("name", list(BAD_CONFIGS))
def test_a_bad_pyproject_gets_a_diagnostic_on_its_line_and_linting_goes_on(tmp_path, name):
    text, line = BAD_CONFIGS[name]
    (tmp_path / "pyproject.toml").write_text(text)
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    config_uri = (tmp_path / "pyproject.toml").resolve().as_uri()
    c = RawClient()
    try:
        c.initialize(tmp_path)
        c.open(path.as_uri(), KERNEL)
        found = c.diagnostics(path.as_uri(), timeout=60)
        config = c.diagnostics(config_uri, timeout=30)
        logged = [n["params"]["message"] for n in c.notifications if n.get("method") == "window/logMessage"]
        assert c.shutdown_and_exit() == 0
    finally:
        c.kill()
    assert [(d["code"], d["range"]["start"]["line"]) for d in found] == [("TRI001", 11)], found   # the defaults
    assert [d["range"]["start"]["line"] for d in config] == [line], config
    assert "not valid TOML" in config[0]["message"] and "linting with the defaults" in config[0]["message"]
    assert not any("RecursionError" in m or "Traceback" in m for m in logged), logged


def test_the_cli_names_a_deeply_nested_pyproject_without_an_internal_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text(f"[tool.tritonify]\n{DEEP}\n")
    (tmp_path / "k.py").write_text(KERNEL)
    r = tritonify("check", ".", cwd=tmp_path)
    assert r.returncode == 2
    assert "internal error" not in r.stderr and "RecursionError" not in r.stderr
    assert f"{(tmp_path / 'pyproject.toml').resolve()}: not valid TOML (tables or arrays nested too deeply" in r.stderr
