"""`tritonify check` as a user runs it: output formats (golden), exit codes, config, fixes."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
GOLDEN = HERE / "golden"
SELECT = ["--select", "TRI001,TRI000"]  # golden files stay stable as rules are added


@pytest.fixture(autouse=True)
def work(tmp_path, monkeypatch):
    """A copy of tests/cli/project in a temporary folder (this repository's own
    [tool.tritonify] excludes tests/), with the commands run from there."""
    shutil.copytree(HERE / "project", tmp_path / "project")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def normalise(text: str) -> str:
    """Golden files must not depend on where the package is installed."""
    from tritonify.references import ROOT as REFERENCES

    return text.replace(REFERENCES.as_uri(), "REFERENCES")


def tritonify(*args, cwd=None, stdin=None):
    return subprocess.run([sys.executable, "-m", "tritonify", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=stdin is None or isinstance(stdin, str), timeout=120)


def golden(name: str, actual: str):
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(actual)
    assert path.is_file(), f"run with UPDATE_GOLDEN=1 to create {path}"
    assert actual == path.read_text()


def test_text_output_golden_and_exit_code():
    r = tritonify("check", "project", *SELECT)
    assert r.returncode == 1
    golden("check.txt", r.stdout)
    # the half-typed file gets one syntax finding and does not stop the run
    assert "project/broken.py:6:" in r.stdout and "TRI000" in r.stdout
    assert "project/kernels.py:12:" in r.stdout            # in the loop
    assert "project/kernels.py:13:" not in r.stdout        # noqa
    assert "ignored_by_git" not in r.stdout                # .gitignore honoured


def test_json_output_golden():
    r = tritonify("check", "project", *SELECT, "--format", "json")
    assert r.returncode == 1
    data = json.loads(r.stdout)
    for item in data:
        assert {"path", "line", "column", "end_line", "end_column", "code", "severity", "message", "fix"} <= set(item)
        assert item["line"] >= 1 and item["column"] >= 1
    tri = [d for d in data if d["code"] == "TRI001" and d["path"].endswith("kernels.py")]
    assert tri[0]["fix"]["edits"][0]["content"].startswith("2 * tl.sigmoid(")
    golden("check.json", normalise(r.stdout))


def test_sarif_output_is_valid_2_1_0():
    r = tritonify("check", "project", *SELECT, "--format", "sarif")
    doc = json.loads(r.stdout)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    assert run["tool"]["driver"]["name"] == "tritonify"
    ids = {rule["id"] for rule in run["tool"]["driver"]["rules"]}
    for res in run["results"]:
        assert res["ruleId"] in ids
        region = res["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    rules = run["tool"]["driver"]["rules"]
    for res in run["results"]:
        assert rules[res.pop("ruleIndex")]["id"] == res["ruleId"]  # index checked, then dropped:
    golden("check.sarif.results", normalise(json.dumps(run["results"], indent=2)))  # it moves as rules are added


def test_clean_file_exits_zero(tmp_path):
    f = tmp_path / "clean.py"
    f.write_text("import triton\n\n@triton.jit\ndef k(x):\n    return x\n")
    r = tritonify("check", str(f))
    assert r.returncode == 0, r.stdout
    assert "All checks passed" in r.stdout


def test_usage_errors_exit_two():
    assert tritonify("check", "does/not/exist").returncode == 2
    assert tritonify("check", "--format", "xml", "project").returncode == 2
    assert tritonify("bogus-command").returncode == 2


def test_select_ignore_and_statistics():
    r = tritonify("check", "project/kernels.py", "--select", "TRI001", "--ignore", "TRI001")
    assert r.returncode == 0
    # TRI000 (the file cannot be parsed or decoded) is no rule: no selection hides it (issue 31)
    r = tritonify("check", "project", "--select", "TRI001", "--ignore", "TRI001")
    assert r.returncode == 1 and "project/broken.py:6:21: TRI000 SyntaxError" in r.stdout, r.stdout
    r = tritonify("check", "project", *SELECT, "--statistics")
    lines = r.stdout.strip().splitlines()
    assert any(line.split("\t")[1] == "TRI001" for line in lines)


def test_pyproject_config_is_honoured(tmp_path):
    shutil.copy(HERE / "project" / "kernels.py", tmp_path / "kernels.py")
    (tmp_path / "pyproject.toml").write_text('[tool.tritonify]\nignore = ["TRI001"]\n')
    r = tritonify("check", ".", cwd=tmp_path)
    assert "TRI001" not in r.stdout
    (tmp_path / "pyproject.toml").write_text('[tool.tritonify]\nseverity = { TRI001 = "error" }\nselect = ["TRI001"]\n')
    r = tritonify("check", ".", "--format", "json", cwd=tmp_path)
    assert {d["severity"] for d in json.loads(r.stdout)} == {"error"}
    (tmp_path / "pyproject.toml").write_text('[tool.tritonify]\nbogus = 1\n')
    r = tritonify("check", ".", cwd=tmp_path)
    assert r.returncode == 2 and "unknown key" in r.stderr


def test_fix_applies_safe_fixes_and_is_idempotent(tmp_path):
    f = tmp_path / "kernels.py"
    shutil.copy(HERE / "project" / "kernels.py", f)
    r = tritonify("check", str(f), "--select", "TRI001", "--fix", "--diff")
    assert "+        x = 2 * tl.sigmoid(2 * x) - 1" in r.stdout
    assert "libdevice.tanh(x)\n" in f.read_text()  # --diff writes nothing
    r = tritonify("check", str(f), "--select", "TRI001", "--fix")
    assert r.returncode == 0, r.stdout
    assert "Fixed 1 finding." in r.stdout
    assert "x = 2 * tl.sigmoid(2 * x) - 1" in f.read_text()
    assert "# noqa: TRI001" in f.read_text()  # the suppressed call is left alone
    r = tritonify("check", str(f), "--select", "TRI001", "--fix")
    assert "Fixed" not in r.stdout


def test_stdin_and_bad_bytes():
    r = tritonify("check", "--stdin-filename", "x.py", *SELECT, stdin=b"import triton\n\x00\x00")
    assert r.returncode == 1
    assert b"x.py:2:1: TRI000" in r.stdout and b"NUL" in r.stdout
    r = tritonify("check", "project/sub/latin1.py", *SELECT)
    assert "UnicodeDecodeError" not in r.stderr
    assert r.returncode == 1
    assert "not valid utf-8" in r.stdout and "TRI001" in r.stdout  # bad bytes reported, findings kept


def test_large_file_is_checked_or_refused_clearly(tmp_path):
    f = tmp_path / "big.py"
    body = (HERE / "project" / "kernels.py").read_text()
    f.write_text(body * (5_000_000 // len(body) + 1))
    r = subprocess.run([sys.executable, "-m", "tritonify", "check", str(f), *SELECT, "--statistics"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 1
    assert "TRI001" in r.stdout
