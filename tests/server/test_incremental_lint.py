"""Typing into a kernel: the server re-lints that kernel only, publishes, then confirms with a
full lint once typing pauses; a long lint tells the client it is busy (tritonify/lintBusy)."""
from __future__ import annotations

import time

import pytest

from tests.server.rawclient import RawClient
from tests.test_incremental import TEXT, _insert
from tritonify.diagnostics.incremental import layout_of
from tritonify.diagnostics.source import SourceFile


@pytest.fixture
def client(tmp_path):
    c = RawClient(env={"TRITONIFY_LATENCY_TRACE": str(tmp_path / "trace.jsonl")})
    yield c
    c.kill()


def _tanh_lines(diagnostics):
    return sorted(d["range"]["start"]["line"] for d in diagnostics if d["code"] == "TRI001")


def test_typing_into_a_kernel_publishes_its_new_finding_then_the_full_lint_agrees(client, tmp_path):
    path = tmp_path / "kernels.py"
    path.write_text(TEXT)
    uri = path.as_uri()
    client.initialize(tmp_path)
    client.open(uri, TEXT)
    assert len(_tanh_lines(client.diagnostics(uri, 1, timeout=60))) == 4
    second = layout_of(SourceFile.from_text(TEXT, "k.py")).segments[1]
    edited = TEXT
    typed = ""
    version = 1
    start = client.mark()
    for key in "w = libdevice.tanh(x)":    # typed key by key into the second kernel
        typed += key
        version += 1
        edited = _insert(TEXT, second.last - 1, "        " + typed)
        client.change(uri, edited, version)
    expected = [n - 1 for n in range(1, len(edited.splitlines()) + 1) if "libdevice.tanh(" in edited.splitlines()[n - 1]]
    assert len(expected) == 5
    # TRI001 is of kernel scope: a first answer of the version (the statement-scope findings of
    # what was typed, the others carried over) may come before the one with the typed tanh; the
    # four others are in every publication of it
    first = client.wait_notification(
        "textDocument/publishDiagnostics",
        lambda p: p["uri"] == uri and p.get("version") == version and len(_tanh_lines(p["diagnostics"])) == 5,
        60, start)["diagnostics"]
    assert _tanh_lines(first) == expected
    after = client.mark()
    earlier = [n["params"]["diagnostics"] for n in client.notifications[start:after]
               if n.get("method") == "textDocument/publishDiagnostics" and n["params"].get("version") == version]
    assert all(set(expected) - set(_tanh_lines(d)) <= {second.last - 1} for d in earlier), earlier
    # once typing pauses, the full lint of that version runs; it agrees, so nothing else is
    # published for that version (a publication equal to the last one is not sent again)
    confirmed = client.wait_event(lambda e: e["ev"] == "s.publish.exact" and e["version"] == version, 60)
    assert confirmed["findings"] == len(first)
    time.sleep(0.5)
    later = [n["params"]["diagnostics"] for n in client.notifications[after:]
             if n.get("method") == "textDocument/publishDiagnostics" and n["params"].get("version") == version]
    assert later == []


def test_a_lint_longer_than_300_ms_says_busy_then_not(client, tmp_path):
    big = TEXT + "".join(TEXT[TEXT.index("@triton.jit"):].replace("gelu_", f"gelu{i}_").replace("launch_", f"launch{i}_")
                         for i in range(60))
    path = tmp_path / "big.py"
    path.write_text(big)
    uri = path.as_uri()
    client.initialize(tmp_path)
    start = client.mark()
    client.open(uri, big)
    busy = client.wait_notification("tritonify/lintBusy", lambda p: p["uri"] == uri and p["busy"], 60, start)
    assert busy == {"uri": uri, "busy": True}
    client.wait_notification("tritonify/lintBusy", lambda p: p["uri"] == uri and not p["busy"], 60, start)
    assert len(_tanh_lines(client.diagnostics(uri, 1, timeout=60, start=start))) == 4 * 61


def test_editing_a_module_constant_updates_the_findings_of_the_kernels_that_read_it(client, tmp_path):
    from tests.test_incremental import CONST_TEXT

    (tmp_path / "pyproject.toml").write_text('[tool.tritonify]\nselect = ["ALL"]\n')
    path = tmp_path / "blocks.py"
    path.write_text(CONST_TEXT)
    uri = path.as_uri()
    client.initialize(tmp_path)
    client.open(uri, CONST_TEXT)
    assert [d for d in client.diagnostics(uri, 1, timeout=60) if d["code"] == "TRI004"] == []
    version, edited = 1, CONST_TEXT
    for value in ("4", "48", "64", "96"):   # typed over the old value, one version per key
        version += 1
        edited = CONST_TEXT.replace("BLOCK_A = 64", f"BLOCK_A = {value}")
        start = client.mark()
        client.change(uri, edited, version)
    published = client.diagnostics(uri, version, timeout=60, start=start)
    lines = edited.splitlines()
    # 96 and 192 are not powers of two: uses_a (reads BLOCK_A) and uses_b (BLOCK_B = BLOCK_A * 2)
    flagged = sorted(lines[d["range"]["start"]["line"]].strip() for d in published if d["code"] == "TRI004")
    assert flagged == ["offs = tl.arange(0, BLOCK_A)", "offs = tl.arange(0, BLOCK_B)"]
    version += 1
    start = client.mark()
    client.change(uri, CONST_TEXT, version)   # and back to 64: no stale finding stays
    assert [d for d in client.diagnostics(uri, version, timeout=60, start=start) if d["code"] == "TRI004"] == []
