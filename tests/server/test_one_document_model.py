"""One document model (issue 27 item 1): the worker that lints a document holds its one copy of
the text, gets the client's edits as ranges (not whole texts), parses each version once, and
the confirming full lint reads the same state as the incremental lints, so that two answers
about one version cannot differ."""
from __future__ import annotations

import random

import pytest

from tests.server.rawclient import RawClient, lsp_position
from tritonify.diagnostics.settings import Settings
from tritonify.server import lint_worker
from tritonify.server.documents import ChangeLog
from tritonify.server.text_edits import apply_edits

KERNEL = '''import triton
import triton.language as tl

from pkg.sizes import BLOCK


@triton.jit
def copy_kernel(x_ptr, y_ptr, n):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
'''


@pytest.fixture
def client(tmp_path):
    c = RawClient(env={"TRITONIFY_LATENCY_TRACE": str(tmp_path / "trace.jsonl")})
    yield c
    c.kill()


def _range_change(text: str, offset: int, end: int, new: str) -> dict:
    return {"range": {"start": lsp_position(text, offset), "end": lsp_position(text, end)}, "text": new}


def _tri004(diagnostics) -> list[int]:
    return [d["range"]["start"]["line"] for d in diagnostics if d["code"] == "TRI004"]


def test_the_confirming_lint_reads_the_overlay_the_incremental_lints_read(client, tmp_path):
    """`pkg/sizes.py` says BLOCK = 48 on disk (TRI004 in the kernel: not a power of two) and 64 in
    the editor. Every answer about the kernel file, the incremental ones while typing and the full
    lint that confirms them once typing pauses, must read the editor's 64: a confirming lint in a
    worker that never got the editor's `sizes.py` read 48 from disk and published TRI004."""
    (tmp_path / "pyproject.toml").write_text('[tool.tritonify]\nselect = ["ALL"]\n')
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "sizes.py").write_text("BLOCK = 48\n")
    (pkg / "kern.py").write_text(KERNEL)
    sizes, kern = (pkg / "sizes.py").as_uri(), (pkg / "kern.py").as_uri()
    client.initialize(tmp_path)
    client.open(sizes, "BLOCK = 64\n")
    client.diagnostics(sizes, 1, timeout=60)
    client.open(kern, KERNEL)
    assert _tri004(client.diagnostics(kern, 1, timeout=60)) == []
    start = client.mark()
    text, version = KERNEL, 1
    anchor = text.index("mask = offs < n")
    for key in "z = 1\n    ":   # typed into the kernel, one version per key
        version += 1
        client.notify("textDocument/didChange", {"textDocument": {"uri": kern, "version": version},
                                                 "contentChanges": [_range_change(text, anchor, anchor, key)]})
        text = text[:anchor] + key + text[anchor:]
        anchor += len(key)
    client.diagnostics(kern, version, timeout=60, start=start)
    # the confirming full lint runs once typing pauses (CONFIRM_IDLE_S); its answer is published
    # when it differs from what is shown
    client.wait_event(lambda e: e["ev"] == "s.publish.exact" and e["version"] == version, 30)
    published = [n["params"] for n in client.notifications[start:]
                 if n.get("method") == "textDocument/publishDiagnostics" and n["params"]["uri"] == kern]
    assert published and all(_tri004(p["diagnostics"]) == [] for p in published), published


def test_a_didchange_reaches_the_worker_as_edits_and_each_version_is_parsed_once(client, tmp_path):
    path = tmp_path / "kernels.py"
    text = KERNEL.replace("from pkg.sizes import BLOCK\n", "BLOCK = 64\n")
    path.write_text(text)
    uri = path.as_uri()
    client.initialize(tmp_path)
    client.open(uri, text)
    client.diagnostics(uri, 1, timeout=60)
    version = 1
    anchor = text.index("mask = offs < n")
    for key in 'tl.device_print("typed", n)\n    ':
        version += 1
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [_range_change(text, anchor, anchor, key)]})
        text = text[:anchor] + key + text[anchor:]
        anchor += len(key)
    published = client.diagnostics(uri, version, timeout=60, start=0)
    assert [d["code"] for d in published].count("TRI022") == 1
    # the confirming full lint of the last version ran
    client.wait_event(lambda e: e["ev"] == "s.publish.exact" and e["version"] == version, 30)
    events = client.events()
    requests = [e for e in events if e["ev"] == "w.request"]
    whole = [e for e in requests if not e["edits"] and e["chars"] != len(lint_worker.WARM_UP)]
    assert len(whole) == 1 and whole[0]["chars"] == len(KERNEL.replace("from pkg.sizes import BLOCK\n", "BLOCK = 64\n"))
    assert len([e for e in requests if e["edits"]]) >= 2   # every lint after the open: the edits
    # one parse per version: the warm-up's, and one per version linted (the confirming lint of the
    # last version parses nothing)
    versions = {e["version"] for e in events if e["ev"] == "s.lint"}
    parses = [e for e in events if e["ev"] == "w.parse"]
    assert len(parses) <= len(versions) + 1 < len(requests), (len(parses), len(versions), len(requests))


def test_each_version_is_parsed_once_in_the_worker(tmp_path):
    """The incremental lint and the confirming full lint of one version: one parse."""
    path = str(tmp_path / "k.py")
    text = KERNEL.replace("from pkg.sizes import BLOCK\n", "BLOCK = 64\n")
    lint_worker.lint_with_kernels(text, path, Settings(), "full")
    edited = text.replace("    mask = offs < n", "    z = 1\n    mask = offs < n")
    before = lint_worker.PARSE_COUNT[0]
    incremental, _, exact = lint_worker.lint_with_kernels(edited, path, Settings(), "incremental")
    full, _, full_exact = lint_worker.lint_with_kernels(edited, path, Settings(), "full")
    assert lint_worker.PARSE_COUNT[0] - before == 1
    assert full_exact and [f.to_dict() for f in full.findings] == [f.to_dict() for f in incremental.findings]


def test_the_worker_applies_edits_as_the_server_does_and_refuses_edits_to_a_text_it_lacks():
    rng = random.Random(7)
    text = "a = 1\r\nb = 'é𝄞'\n\rc = 3\n"
    log = ChangeLog()
    log.opened("u", 1)
    lint_worker._TEXTS.clear()
    assert lint_worker.document_text(("text", text), "/p.py") == text
    current = text
    for version in range(2, 40):
        lines = current.split("\n")
        line = rng.randrange(len(lines) + 1)
        char = rng.randrange(8)
        new = rng.choice(["x", "\n", "\r\n", "é", "𝄞", "", "yy\rz"])
        edit = (line, char, line + rng.randrange(2), rng.randrange(8), new)
        expected = apply_edits(current, [edit], "utf-16")

        class Change:   # what lsprotocol gives: a range and a text
            range = type("R", (), {"start": type("P", (), {"line": edit[0], "character": edit[1]}),
                                   "end": type("P", (), {"line": edit[2], "character": edit[3]})})
            text = new

        log.changed("u", version, [Change])
        edits = log.edits("u", log.key("u"), version - 1, version)
        got = lint_worker.document_text(("edits", tuple(edits), "utf-16", len(expected),
                                         lint_worker.text_crc(expected)), "/p.py")
        assert got == expected
        current = expected
    # edits that give another text than the server's, or to a text the worker lacks: refused
    assert lint_worker.document_text(("edits", ((0, 0, 0, 0, "q"),), "utf-16", 1, 0), "/p.py") is None
    assert lint_worker.document_text(("edits", (), "utf-16", 0, 0), "/never.py") is None
    # the change log: a reopened document is another generation; versions it no longer has give None
    old = log.key("u")
    log.opened("u", 1)
    assert log.edits("u", old, 1, 2) is None and log.edits("u", log.key("u"), 1, 1) == []


def test_edits_that_give_another_text_make_the_server_send_the_text(tmp_path, monkeypatch):
    """The server thinks the worker holds version 1 and sends edits that do not lead to the
    server's text (a change log out of step, a worker that lost the text): the worker answers
    "resync" and the same request sends the text, whose findings come back."""
    import asyncio

    from tritonify.server.lint_worker import LintWorker, Revision

    tanh = ("import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n"
            "@triton.jit\ndef k(x_ptr):\n    x = tl.load(x_ptr + tl.arange(0, 16))\n"
            "    for _ in range(4):\n        x = libdevice.tanh(x)\n    tl.store(x_ptr + tl.arange(0, 16), x)\n")
    clean = tanh.replace("libdevice.tanh(x)", "x * 2")
    key = object()

    trace = tmp_path / "worker-trace.jsonl"
    monkeypatch.setenv("TRITONIFY_LATENCY_TRACE", str(trace))   # the worker's own trace: what it got

    async def main():
        worker = LintWorker()
        try:
            first, _, _ = await worker.request(clean, "/tmp/resync.py", Settings(), 30,
                                               revision=Revision(key, 1, "utf-16", lambda since: None))
            wrong = Revision(key, 2, "utf-16", lambda since: [(0, 0, 0, 0, "# not what the server has\n")])
            second, _, _ = await worker.request(tanh, "/tmp/resync.py", Settings(), 30, revision=wrong)
            right = Revision(key, 3, "utf-16", lambda since: [(7, 12, 7, 26, "x * 2")] if since == 2 else None)
            third, _, _ = await worker.request(tanh.replace("libdevice.tanh(x)", "x * 2(x)"), "/tmp/resync.py",
                                               Settings(), 30, revision=right)
        finally:
            await worker.aclose()
        return first, second, third, worker.restarts

    first, second, third, restarts = asyncio.run(main())
    assert [f.code for f in first.findings] == []
    assert [f.code for f in second.findings] == ["TRI001"] and restarts == 0
    assert [f.code for f in third.findings] == []
    import json

    got = [json.loads(line)["edits"] for line in trace.read_text().splitlines() if '"w.request"' in line]
    assert got == [False, False, True]   # the text, the text again after "resync", then edits that fit
