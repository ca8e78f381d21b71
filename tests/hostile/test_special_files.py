"""Inputs that block or grow (issue 31): special files behind regular-looking names, and files
past the size limit, in the CLI and in the server.

- A symbolic link to `/proc/kmsg` is a "regular file" to `stat`, and a read of it blocks until the
  kernel logs something: the CLI hung on it (named, inside a folder, with `--fix`), and so did the
  server when it read it as a `pyproject.toml` or as a module the open kernel imports. Now such a
  file is refused without being opened (infra/bounded_read.py), and a hover on another document
  is answered within 300 ms while the server meets them. (An imported module that is a FIFO or
  larger than the index's limit was already left alone: those two cases guard it.)
- `--fix` and `--stdin-filename` read a file past the 10 MB limit whole (1 GB of memory for a
  1 GB file); the limit now applies before reading: the child's peak memory stays far below the
  file's size.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.server.rawclient import RawClient

KERNEL = (Path(__file__).resolve().parents[1] / "cli" / "project" / "kernels.py").read_text()   # TRI001 on line 12
BLOCKING = Path("/proc/kmsg")   # regular to stat, blocks a read (when readable: root)
HOVER_BUDGET_S = 0.3
needs_kmsg = pytest.mark.skipif(not BLOCKING.exists(), reason="no /proc/kmsg here")


def tritonify(*args, cwd=None, stdin=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "tritonify", *args], cwd=cwd, stdin=stdin, capture_output=True,
                          text=True, timeout=timeout)


def peak_rss_mb(argv: list[str], stdin_path: Path | None = None) -> tuple[float, subprocess.CompletedProcess]:
    """Run `argv` under a small Python parent and return the child's peak resident memory."""
    probe = ("import resource, subprocess, sys\n"
             "stdin = open(sys.argv[1], 'rb') if sys.argv[1] else None\n"
             "done = subprocess.run(sys.argv[2:], stdin=stdin, capture_output=True)\n"
             "sys.stdout.write(done.stdout.decode() + '\\n@@' + str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n")
    done = subprocess.run([sys.executable, "-c", probe, str(stdin_path or ""), *argv], capture_output=True, text=True,
                          timeout=120)
    out, _, rss = done.stdout.rpartition("\n@@")
    return int(rss) / 1024, subprocess.CompletedProcess(argv, done.returncode, out, done.stderr)


# ---- the CLI ----------------------------------------------------------------------------------------

@needs_kmsg
@pytest.mark.parametrize("how", ["named", "in a folder", "--fix"])
def test_the_cli_refuses_a_link_to_a_blocking_file_at_once(tmp_path, how):
    (tmp_path / "k.py").write_text(KERNEL)
    link = tmp_path / "logs.py"
    link.symlink_to(BLOCKING)
    args = {"named": [str(link), str(tmp_path / "k.py")], "in a folder": [str(tmp_path)],
            "--fix": [str(tmp_path), "--fix"]}[how]
    started = time.monotonic()
    r = tritonify("check", *args, "--select", "TRI001", timeout=30)   # hung here before
    assert time.monotonic() - started < 30
    assert f"{link}: skipped: a file of /proc (/proc/kmsg)" in r.stderr, r.stderr
    assert ("Fixed 1 finding." if how == "--fix" else "k.py:12:13: TRI001") in r.stdout   # the others are checked


def test_a_file_over_the_limit_is_not_read_by_fix_or_stdin(tmp_path):
    big = tmp_path / "big.py"
    with open(big, "wb") as f:   # sparse: 300 MB that take no disk
        f.truncate(300_000_000)
    for argv, stdin in (([sys.executable, "-m", "tritonify", "check", str(big), "--fix"], None),
                        ([sys.executable, "-m", "tritonify", "check", "--stdin-filename", "big.py"], big),
                        ([sys.executable, "-m", "tritonify", "check", str(big)], None)):
        rss, r = peak_rss_mb(argv, stdin)
        assert "over the 10 MB lint limit" in r.stdout, (argv, r.stdout, r.stderr)
        assert rss < 150, f"{argv[3:]}: {rss:.0f} MB resident for a 300 MB file that is over the limit"


# ---- the server ----------------------------------------------------------------------------------

def _hover_times(c: RawClient, uri: str, n: int = 5) -> list[float]:
    times = []
    for _ in range(n):
        started = time.monotonic()
        answer = c.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 11, "character": 24}},
                           timeout=30)
        times.append(time.monotonic() - started)
        assert "error" not in answer, answer
    return times


@pytest.mark.parametrize("case", ["pyproject links to /proc/kmsg", "imported module links to /proc/kmsg",
                                  "the open file links to /proc/kmsg", "imported module is a FIFO",
                                  "imported module is 300 MB"])
def test_the_server_meets_special_and_huge_files_and_answers_another_documents_hover(tmp_path, case):
    if "kmsg" in case and not BLOCKING.exists():
        pytest.skip("no /proc/kmsg here")
    calm, hostile = tmp_path / "calm", tmp_path / "hostile"
    calm.mkdir()
    hostile.mkdir()
    (calm / "k.py").write_text(KERNEL)
    text = "from helpers import SCALE\n" + KERNEL
    (hostile / "k.py").write_text(text)
    helpers = hostile / "helpers.py"
    helpers.write_text("SCALE = 2\n")
    if case.startswith("pyproject"):
        (hostile / "pyproject.toml").symlink_to(BLOCKING)
    elif case.startswith("the open file"):   # the editor holds its text; a code action reads the disk beside it
        (hostile / "k.py").unlink()
        (hostile / "k.py").symlink_to(BLOCKING)
    elif "kmsg" in case:
        helpers.unlink()
        helpers.symlink_to(BLOCKING)
    elif "FIFO" in case:
        helpers.unlink()
        os.mkfifo(helpers)
    else:
        with open(helpers, "wb") as f:
            f.truncate(300_000_000)
    c = RawClient()
    try:
        c.initialize(tmp_path, capabilities={"workspace": {"workspaceEdit": {"documentChanges": True,
                                                                             "resourceOperations": ["create"]}}})
        c.open((calm / "k.py").as_uri(), KERNEL)
        c.diagnostics((calm / "k.py").as_uri(), timeout=60)
        _hover_times(c, (calm / "k.py").as_uri(), 2)   # warm
        c.open((hostile / "k.py").as_uri(), text)
        inside = {"start": {"line": 9, "character": 4}, "end": {"line": 9, "character": 4}}
        c.request_async("textDocument/codeAction", {"textDocument": {"uri": (hostile / "k.py").as_uri()}, "range": inside,
                                                    "context": {"diagnostics": []}})
        times = _hover_times(c, (calm / "k.py").as_uri())
        found = c.diagnostics((hostile / "k.py").as_uri(), timeout=30)
        assert c.shutdown_and_exit() == 0
    finally:
        c.kill()
    assert statistics.median(times) < HOVER_BUDGET_S, f"{case}: hovers took {[round(t * 1000) for t in times]} ms"
    assert ("TRI001", 12) in [(d["code"], d["range"]["start"]["line"]) for d in found], found   # and it was linted
