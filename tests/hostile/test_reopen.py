"""Closing a document and opening it again at version 1 with other text (issue 31): what is
published for it is the new text's findings, never the old one's (before the fix, the lint of the
old text, still running when the document closed, was taken for the new one: the same URI and
version, and 561 old findings were shown on the new text)."""
from __future__ import annotations

import time
from pathlib import Path

from tests.server.rawclient import RawClient

KERNEL = (Path(__file__).resolve().parents[1] / "cli" / "project" / "kernels.py").read_text()   # TRI001 on line 12


def many_kernels(n: int) -> str:
    """A file whose lint takes a while: `n` copies of the kernel, each with its TRI001."""
    head, body = KERNEL.split("@triton.jit", 1)
    return head + "".join(f"@triton.jit{body.replace('act_kernel', f'act_kernel_{i}')}\n\n" for i in range(n))


CLEAN = KERNEL.replace("libdevice.tanh(x)", "x * 2.0").replace("  # noqa: TRI001", "")


def index_after_close(c: RawClient, uri: str, start: int) -> int:
    """Where what comes after the empty, versionless publication for `uri` that a didClose
    makes (server.clear_diagnostics) starts, from `start` on."""
    return c.mark_after("textDocument/publishDiagnostics",
                        lambda p: p["uri"] == uri and p.get("version") is None and p["diagnostics"] == [], 30.0, start)


def test_reopening_at_version_1_with_other_text_never_shows_the_old_findings(tmp_path):
    old = many_kernels(300)
    uri = (tmp_path / "k.py").as_uri()
    c = RawClient()
    try:
        c.initialize(tmp_path)
        for attempt in range(3):   # the old lint must still be running when the document closes
            c.open(uri, old)
            time.sleep(0.3 + 0.2 * attempt)
            closing = c.mark()
            c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            c.open(uri, CLEAN)
            # what the server published before it read the didClose may reach us after it was
            # sent (the old text's findings, rightly, for the old document): what counts is what
            # comes after the empty publication the close makes
            start = index_after_close(c, uri, closing)
            found = c.diagnostics(uri, version=1, timeout=60, start=start)
            time.sleep(1.5)   # anything still to come for version 1 comes now
            published = [n["params"]["diagnostics"] for n in c.notifications[start:]
                         if n.get("method") == "textDocument/publishDiagnostics" and n["params"]["uri"] == uri]
            lines = CLEAN.count("\n")
            for diagnostics in published:
                assert all(d["range"]["end"]["line"] <= lines for d in diagnostics), \
                    f"findings of the old text published for the new one ({len(diagnostics)})"
                assert not [d for d in diagnostics if d["code"] == "TRI001"], diagnostics
            assert found == [] or all(d["code"] != "TRI001" for d in found)
            c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        assert c.shutdown_and_exit() == 0
    finally:
        c.kill()
