"""`tritonify check` against inputs an attacker or an unlucky user gives it (issue 14): every bad
input gets one clear message naming the file, none stops the run, and no fix writes a file it
corrupts."""
from __future__ import annotations

import ast
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tritonify.diagnostics import file_fixes
from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.fixes import fix_until_stable
from tritonify.diagnostics.model import Edit, Finding, Fix
from tritonify.diagnostics.settings import Settings

HERE = Path(__file__).parent
KERNEL = (HERE / "project" / "kernels.py").read_text()   # one fixable TRI001 on line 12, one noqa'd on 13
FIXED_LINE = "        x = 2 * tl.sigmoid(2 * x) - 1"
TRI001 = Settings(select=("TRI001",))


def tritonify(*args, cwd=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "tritonify", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


# ---- fixes that cannot corrupt ------------------------------------------------------------------

@pytest.mark.parametrize("name, text", [
    ("form feed before the kernel", KERNEL.replace("@triton.jit", "\f@triton.jit")),
    ("form feed on a line of its own", "\f\n" + KERNEL),
    ("U+2028 in a comment", KERNEL.replace("import triton\n", "import triton  # a\u2028b\n", 1)),
    ("U+0085 and U+2029 in a string", KERNEL.replace("import triton\n", "import triton\nDOC = '\x85\u2029'\n", 1)),
])
def test_odd_characters_do_not_shift_the_fix(tmp_path, name, text):
    f = write(tmp_path / "k.py", text)
    r = tritonify("check", str(f), "--select", "TRI001", "--fix")
    out = f.read_text(encoding="utf-8")
    ast.parse(out)
    assert FIXED_LINE in out.split("\n"), name
    assert "        x = libdevice.tanh(x)  # noqa: TRI001" in out    # the silenced call is left alone
    assert out.count("sigmoid") == 1 and "Fixed 1 finding." in r.stdout


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_line_endings_are_kept_and_the_fix_lands_once(tmp_path, newline):
    f = tmp_path / "k.py"
    f.write_bytes(KERNEL.replace("\n", newline).encode())
    r = tritonify("check", str(f), "--select", "TRI001", "--fix")
    data = f.read_bytes().decode()
    assert data == KERNEL.replace("\n", newline).replace("        x = libdevice.tanh(x)", FIXED_LINE, 1)
    assert "Fixed 1 finding." in r.stdout and r.returncode == 0


def test_a_fix_that_would_not_parse_is_refused_and_reported():
    text = "x = f(a)\ny = g(b)\n"
    good = Finding("TRI001", "m", 1, 4, 1, 8, fixes=[Fix("ok", (Edit(1, 4, 1, 8, "h(a)"),))])
    bad = Finding("TRI002", "m", 2, 4, 2, 8, fixes=[Fix("bad", (Edit(2, 4, 2, 8, "g(b"),))])
    outcome = fix_until_stable(text, [good, bad], lambda t: [])
    assert outcome.text == "x = h(a)\ny = g(b)\n"
    assert [f.code for f in outcome.fixed] == ["TRI001"]
    assert [(f.code, "would not parse" in why) for f, why in outcome.skipped] == [("TRI002", True)]


def test_a_fix_that_does_not_remove_its_finding_is_applied_once():
    """With lone-CR endings the old loop appended the fix at the end of the file ten times."""
    def lint(text):  # a rule whose fix never satisfies it
        end = len(text.rstrip("\n"))
        return [Finding("TRI001", "m", 1, end, 1, end, fixes=[Fix("append", (Edit.insert(1, end, " + 0"),))])]

    outcome = fix_until_stable("x = 1\n", lint("x = 1\n"), lint)
    assert outcome.text == "x = 1 + 0\n" and outcome.count == 1
    assert [why for _, why in outcome.skipped] == ["applied once, but its fix does not remove the finding"]


def test_the_same_fix_twice_is_applied_twice_when_one_waits_a_pass():
    def lint(text):
        out = []
        for no, line in enumerate(text.split("\n"), 1):
            col = line.find("f(x)")
            if col >= 0:
                out.append(Finding("TRI001", "m", no, col, no, col + 4, fixes=[Fix("g", (Edit(no, col, no, col + 4, "g(x)"),))]))
            if no == 2 and not line.endswith("# ok"):  # a second rule rewrites the whole line
                out.insert(1, Finding("TRI002", "m", 2, 0, 2, len(line), fixes=[Fix("ok", (Edit(2, 0, 2, len(line), line + "  # ok"),))]))
        return out

    text = "a = f(x)\nb = f(x)\n"
    outcome = fix_until_stable(text, lint(text), lint)
    assert outcome.text == "a = g(x)\nb = g(x)  # ok\n" and outcome.count == 3 and not outcome.skipped


def test_a_file_changed_while_fixing_is_left_alone(tmp_path, monkeypatch):
    f = write(tmp_path / "k.py", KERNEL)
    edited = KERNEL.replace("import triton\n", "import triton\nimport os\n")
    calls = []

    def lint_then_the_editor_saves(text, path, settings, **kwargs):
        calls.append(1)
        if len(calls) == 2:                       # while the fix loop runs
            write(f, edited)
        return lint_text(text, path, settings, **kwargs)

    monkeypatch.setattr(file_fixes, "lint_text", lint_then_the_editor_saves)
    outcome = file_fixes.fix_file(f, TRI001)
    assert f.read_text() == edited                # the user's edit survives, no stale offsets applied
    assert outcome.fixed == 0
    assert any("changed while it was being checked" in p and str(f) in p for p in outcome.problems)


def test_an_unwritable_file_is_reported_and_the_others_are_fixed(tmp_path):
    for name in ("a.py", "b.py", "c.py"):
        write(tmp_path / name, KERNEL)
    locked = tmp_path / "b.py"
    if os.geteuid() == 0 and shutil.which("chattr") and subprocess.run(["chattr", "+i", str(locked)]).returncode == 0:
        undo = ["chattr", "-i", str(locked)]
    elif os.geteuid() != 0:
        locked.chmod(0o444)
        undo = None
    else:
        pytest.skip("root without chattr: no file can be made unwritable")
    try:
        r = tritonify("check", str(tmp_path), "--select", "TRI001", "--fix")
    finally:
        if undo:
            subprocess.run(undo)
    assert FIXED_LINE in (tmp_path / "a.py").read_text() and FIXED_LINE in (tmp_path / "c.py").read_text()
    assert (tmp_path / "b.py").read_text() == KERNEL
    assert f"{locked}: not fixed: cannot write the file" in r.stderr
    assert "Fixed 2 findings." in r.stdout and "Traceback" not in r.stderr
    assert f"{locked}:12:13: TRI001" in r.stdout  # its finding is still reported


def test_bom_and_coding_are_written_back_as_they_were(tmp_path):
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + KERNEL.encode())
    latin = tmp_path / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\n# caf\xe9\n" + KERNEL).encode("latin-1"))
    r = tritonify("check", str(bom), str(latin), "--select", "TRI000,TRI001", "--fix")
    assert "TRI000" not in r.stdout, r.stdout     # a BOM is not a syntax error
    assert bom.read_bytes().startswith(b"\xef\xbb\xbf") and FIXED_LINE in bom.read_bytes().decode("utf-8-sig")
    assert "caf\xe9".encode("latin-1") in latin.read_bytes() and FIXED_LINE in latin.read_bytes().decode("latin-1")


def test_undecodable_bytes_are_not_rewritten(tmp_path):
    f = tmp_path / "bad.py"
    f.write_bytes(b"# \xff\xfe\n" + KERNEL.encode())
    r = tritonify("check", str(f), "--select", "TRI001", "--fix")
    assert f.read_bytes() == b"# \xff\xfe\n" + KERNEL.encode()
    assert f"{f}: not fixed: file is not valid utf-8" in r.stderr


def test_fix_diff_writes_nothing_and_says_would_fix(tmp_path):
    f = write(tmp_path / "k.py", KERNEL)
    r = tritonify("check", str(f), "--select", "TRI001", "--fix", "--diff")
    assert f.read_text() == KERNEL
    assert f"+{FIXED_LINE}" in r.stdout
    assert "Would fix 1 finding." in r.stdout and "Fixed" not in r.stdout
    assert "Found 1 finding (1 warning)" in r.stdout   # the file as it is on disk
    assert r.returncode == 1


# ---- special files, links -------------------------------------------------------------------------

def test_a_fifo_inside_a_folder_is_skipped_not_read(tmp_path):
    write(tmp_path / "k.py", KERNEL)
    os.mkfifo(tmp_path / "pipe.py")
    r = tritonify("check", str(tmp_path), "--select", "TRI001", timeout=30)   # used to hang here
    assert f"{tmp_path / 'pipe.py'}: skipped: a FIFO, not a regular file" in r.stderr
    assert "k.py:12:13: TRI001" in r.stdout and "1 file checked, 1 skipped" in r.stdout
    assert r.returncode == 1


@pytest.mark.parametrize("kind", ["fifo", "socket", "device"])
def test_a_special_file_named_directly_is_a_usage_error(tmp_path, kind):
    if kind == "fifo":
        path = tmp_path / "pipe.py"
        os.mkfifo(path)
    elif kind == "socket":  # a short folder: a socket's path has a length limit (108 bytes)
        path = Path(tempfile.mkdtemp(prefix="tri", dir="/tmp")) / "s.py"
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
    else:
        path = Path("/dev/null")
    r = tritonify("check", str(path), timeout=30)
    if kind == "socket":
        sock.close()
        shutil.rmtree(path.parent)
    assert f"{path}: skipped: a {'device' if kind == 'device' else kind.upper() if kind == 'fifo' else kind}, not a regular file" in r.stderr
    assert "All checks passed" not in r.stdout and "No file checked (1 skipped)." in r.stdout
    assert r.returncode == 2


def test_links_out_of_the_tree_are_followed_and_broken_ones_reported(tmp_path):
    (tmp_path / "tree").mkdir()
    outside = write(tmp_path / "outside.py", KERNEL)
    (tmp_path / "tree" / "link.py").symlink_to(outside)
    (tmp_path / "tree" / "broken.py").symlink_to(tmp_path / "missing.py")
    r = tritonify("check", "tree", "--select", "TRI001", cwd=tmp_path)
    assert "internal error" not in r.stderr, r.stderr
    assert "tree/link.py:12:13: TRI001" in r.stdout
    assert "tree/broken.py: skipped: broken symbolic link" in r.stderr
    assert r.returncode == 1
    (tmp_path / "tree" / ".gitignore").write_text("link.py\n")
    r = tritonify("check", "tree", "--select", "TRI001", cwd=tmp_path)
    assert "link.py" not in r.stdout and r.returncode == 0   # .gitignore decides, by the link's own name


# ---- configuration --------------------------------------------------------------------------------

@pytest.mark.parametrize("line, key, expected", [
    ("select = 1", "select", "expected a list of rule codes"),
    ('severity = "warn"', "severity", "expected a table of code = severity"),
    ("severity = { TRI001 = 3 }", "severity.TRI001", "expected a severity string"),
    ("per-file-ignores = []", "per-file-ignores", "expected a table of glob = [codes]"),
    ('max-file-bytes = "big"', "max-file-bytes", "expected a positive integer"),
    ('exclude = "x"', "exclude", "expected a list of path patterns"),
    ('select = ["TRI0001"]', "select", "unknown rule code 'TRI0001'; did you mean TRI001?"),
    ('ignore = ["XYZ1"]', "ignore", "unknown rule code 'XYZ1'"),
    ('severity = { TRI999 = "error" }', "severity", "unknown rule code 'TRI999'"),
    ('per-file-ignores = { "k.py" = ["TRI0006"] }', "per-file-ignores.'k.py'", "unknown rule code 'TRI0006'"),
    ("select = [", None, "not valid TOML"),
])
def test_a_bad_setting_names_file_key_and_what_was_expected(tmp_path, line, key, expected):
    write(tmp_path / "k.py", KERNEL)
    (tmp_path / "pyproject.toml").write_text(f"[tool.tritonify]\n{line}\n")
    r = tritonify("check", ".", cwd=tmp_path)
    assert r.returncode == 2
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    where = f"{(tmp_path / 'pyproject.toml').resolve()}: " + (f"[tool.tritonify] {key}: " if key else "")
    assert where in r.stderr and expected in r.stderr, r.stderr


@pytest.mark.parametrize("flag, value, bad", [
    ("--select", "TRI001,TRI0001", "TRI0001"), ("--ignore", "FOO", "FOO"), ("--extend-select", "CUD9", "CUD9")])
def test_an_unknown_code_on_the_command_line_is_a_usage_error(tmp_path, flag, value, bad):
    write(tmp_path / "k.py", KERNEL)
    r = tritonify("check", str(tmp_path), flag, value)
    assert r.returncode == 2 and f"{flag}: unknown rule code '{bad}'" in r.stderr


@pytest.mark.parametrize("selectors", ["ALL", "TRI", "TRI01", "CUD", "TRI000,TRI001", "tri001"])
def test_codes_prefixes_and_all_are_valid(tmp_path, selectors):
    write(tmp_path / "k.py", KERNEL)
    r = tritonify("check", str(tmp_path), "--select", selectors, "--ignore", selectors)
    assert r.returncode == 0, r.stderr


def test_an_unknown_code_in_noqa_is_a_warning(tmp_path):
    f = write(tmp_path / "k.py", KERNEL.replace("# noqa: TRI001", "# noqa: TRI0001").replace(
        "mask = offs < n", "mask = offs < n  # noqa: E501"))
    r = tritonify("check", str(f), "--select", "TRI001")
    assert f"{f}: line 13: `noqa` names TRI0001, which is no rule" in r.stderr
    assert "E501" not in r.stderr                         # another tool's code is its business
    assert f"{f}:13:13: TRI001" in r.stdout                # and the line is not silenced
    cu = write(tmp_path / "k.cu", "__global__ void k(float *x) { x[0] = x[0] * 0.1; }  // noqa: CUD0001, E501\n")
    r = tritonify("check", str(cu))
    assert f"{cu}: line 1: `noqa` names CUD0001, which is no rule" in r.stderr and "E501" not in r.stderr


def test_summary_counts_by_severity_with_plurals(tmp_path):
    write(tmp_path / "k.py", KERNEL)
    r = tritonify("check", str(tmp_path), "--select", "TRI001")
    assert "Found 1 finding (1 warning) in 1 file checked." in r.stdout
    write(tmp_path / "j.py", KERNEL.replace("  # noqa: TRI001", ""))
    r = tritonify("check", str(tmp_path), "--select", "TRI001")
    import json
    from collections import Counter

    severities = Counter(d["severity"] for d in json.loads(tritonify("check", str(tmp_path), "--select", "TRI001",
                                                                     "--format", "json").stdout))
    plural = {"warning": "warnings", "info": "info", "error": "errors", "hint": "hints"}
    detail = ", ".join(f"{n} {s if n == 1 else plural[s]}" for s in ("error", "warning", "info", "hint")
                       if (n := severities[s]))
    assert f"Found 3 findings ({detail}) in 2 files checked." in r.stdout   # the rule decides the severities
    from tritonify.diagnostics.model import Severity
    from tritonify.diagnostics.report import summary

    made = [Finding("TRI001", "m", 1, 0, 1, 1, severity=s) for s in
            (Severity.ERROR, Severity.WARNING, Severity.INFO, Severity.INFO, Severity.HINT, Severity.HINT)]
    assert summary(made, 1, fixed=1) == "Fixed 1 finding.\nFound 6 findings (1 error, 1 warning, 2 info, 2 hints) in 1 file checked."
    assert summary(made[:1], 2, fixed=2, would=True).startswith("Would fix 2 findings.\nFound 1 finding (1 error) in 2 files")


# ---- CUDA ------------------------------------------------------------------------------------------

def test_cuda_with_lone_cr_endings_gets_the_same_findings(tmp_path):
    text = (HERE.parent / "rules" / "fixtures" / "CUD001.cu").read_text()
    lf = write(tmp_path / "lf.cu", text)
    cr = write(tmp_path / "cr.cu", text.replace("\n", "\r"))
    a = lint_text(lf.read_bytes(), "x.cu").findings
    b = lint_text(cr.read_bytes(), "x.cu").findings
    assert a and [(f.code, f.line, f.column) for f in a] == [(f.code, f.line, f.column) for f in b]


def test_deeply_nested_cuda_is_not_analysed_and_says_so(tmp_path):
    f = write(tmp_path / "deep.cu", "__global__ void k(float *x) {" + "{" * 20000 + "x[0] = x[0] * 2.0;"
              + "}" * 20000 + "}\n")
    start = time.monotonic()
    r = tritonify("check", str(f))
    assert time.monotonic() - start < 30          # was 80 s and more
    assert f"{f}:1:1: TRI000 not analysed: too deeply nested" in r.stdout


def test_one_file_failing_inside_does_not_lose_the_others(tmp_path, monkeypatch, capsys):
    """An unexpected error on one file is reported with its name; the other files are checked."""
    import argparse

    from tritonify.cli.commands import check
    from tritonify.diagnostics import engine

    for name in ("a.py", "b.py"):
        write(tmp_path / name, KERNEL)
    real = engine.lint_text

    def fails_on_a(text, path, *args, **kwargs):
        if path.endswith("a.py"):
            raise MemoryError("out of memory")
        return real(text, path, *args, **kwargs)

    monkeypatch.setattr(engine, "lint_text", fails_on_a)
    parser = argparse.ArgumentParser()
    check.add_arguments(parser)
    code = check.run(parser.parse_args([str(tmp_path), "--select", "TRI001"]))
    out, err = capsys.readouterr()
    assert code == 2
    assert f"{tmp_path / 'a.py'}: internal error: MemoryError: out of memory" in err
    assert f"{tmp_path / 'b.py'}:12:13: TRI001" in out


def test_a_write_error_on_one_file_leaves_the_others_fixed(tmp_path, monkeypatch, capsys):
    """The same as above wherever no file can be made unwritable (root without chattr): the
    write itself fails, as it does on a read-only mount."""
    import argparse
    import errno

    from tritonify.cli.commands import check

    for name in ("a.py", "b.py", "c.py"):
        write(tmp_path / name, KERNEL)
    locked = tmp_path / "b.py"
    real = Path.write_bytes

    def read_only_b(self, data):
        if self == locked:
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real(self, data)

    monkeypatch.setattr(Path, "write_bytes", read_only_b)
    parser = argparse.ArgumentParser()
    check.add_arguments(parser)
    code = check.run(parser.parse_args([str(tmp_path), "--select", "TRI001", "--fix"]))
    out, err = capsys.readouterr()
    assert f"{locked}: not fixed: cannot write the file (Read-only file system)" in err
    assert FIXED_LINE in (tmp_path / "a.py").read_text() and FIXED_LINE in (tmp_path / "c.py").read_text()
    assert locked.read_text() == KERNEL and "Fixed 2 findings." in out and code == 1
