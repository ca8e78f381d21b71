"""Typing a statement key by key into a kernel, as an editor sends it (a didChange per key, a
codeLens request after each): no publish drops a finding of the rest of the file, and no
codeLens answer drops a kernel's lenses, while the statement is incomplete; its syntax error is
a TRI000 on its line (it used to replace every finding, and the lenses vanished)."""
from __future__ import annotations

import time
from pathlib import Path

from tests.server.rawclient import RawClient

ROOT = Path(__file__).resolve().parents[2]
GLU = ROOT / "examples" / "triton" / "activation_tanh_glu.py"
STATEMENT = "z = tl.load(x_ptr + rows[:, None] * (d_in + 1), mask=rows[:, None] < n_rows, other=0.0)"


def test_typing_a_statement_drops_no_finding_and_no_lens(tmp_path):
    path = tmp_path / "glu.py"
    text = GLU.read_text()
    path.write_text(text)
    uri = path.as_uri()
    lines = text.split("\n")
    where = next(i for i, line in enumerate(lines) if "libdevice.tanh(a)" in line) + 1
    client = RawClient(env={"TRITONIFY_INSPECT": "0"})
    try:
        client.initialize(tmp_path, {"workspace": {"configuration": True}, "textDocument": {"codeLens": {}}})
        client.open(uri, text)
        first = client.diagnostics(uri, version=1, timeout=60)
        expected = sorted((d["code"], d["range"]["start"]["line"] + (d["range"]["start"]["line"] >= where)) for d in first)
        assert expected
        lenses = client.request("textDocument/codeLens", {"textDocument": {"uri": uri}}, timeout=30)["result"]
        kernels = {len(lenses)}
        assert lenses
        mark = client.mark()
        lens_counts = []
        for n in range(1, len(STATEMENT) + 1):
            typed = "\n".join(lines[:where] + ["        " + STATEMENT[:n]] + lines[where:])
            client.change(uri, typed, n + 1)
            lens_counts.append(len(client.request("textDocument/codeLens", {"textDocument": {"uri": uri}},
                                                  timeout=30)["result"] or []))
            time.sleep(0.03)
        last = len(STATEMENT) + 1
        client.diagnostics(uri, version=last, start=mark, timeout=60)
        publishes = [n["params"] for n in client.notifications[mark:]
                     if n.get("method") == "textDocument/publishDiagnostics" and n["params"]["uri"] == uri]
        assert len(publishes) >= 2
        for params in publishes:
            shown = {(d["code"], d["range"]["start"]["line"]) for d in params["diagnostics"] if d["code"] != "TRI000"}
            assert set(expected) <= shown, (params.get("version"), sorted(shown))
            syntax = [d for d in params["diagnostics"] if d["code"] == "TRI000"]
            assert all(d["range"]["start"]["line"] == where for d in syntax), syntax
        assert min(lens_counts) >= min(kernels), lens_counts
        assert not [line for line in client.stderr_lines if "SyntaxError" in line]   # a quiet log
        assert client.shutdown_and_exit() == 0
    finally:
        client.kill()


def test_the_syntax_error_of_a_half_typed_call_stays_where_python_puts_it(tmp_path):
    """While the arguments of a call are typed, its TRI000 marks what Python's caret marks (the
    unclosed `(`, the unterminated quote), not the rest of the line: each key leaves the finding
    as it was, so the editor is handed nothing new per key (extension/diagnosticsShown.ts)."""
    path = tmp_path / "glu.py"
    text = GLU.read_text()
    path.write_text(text)
    uri = path.as_uri()
    lines = text.split("\n")
    where = next(i for i, line in enumerate(lines) if "libdevice.tanh(a)" in line) + 1
    statement = 'tl.device_print("typed", a)'
    indent = "        "
    client = RawClient(env={"TRITONIFY_INSPECT": "0"})
    try:
        client.initialize(tmp_path, {"workspace": {"configuration": True}})
        client.open(uri, text)
        client.diagnostics(uri, version=1, timeout=60)
        mark = client.mark()
        start = statement.index("(") + 1
        version = 1
        for n in range(start, len(statement)):   # from the `(` to the key before the `)`
            version += 1
            client.change(uri, "\n".join(lines[:where] + [indent + statement[:n]] + lines[where:]), version)
            time.sleep(0.15)   # longer than the debounce: each version's syntax error is published
        client.diagnostics(uri, version=version, start=mark, timeout=60)
        syntax = [(d["range"]["start"], d["range"]["end"]) for n in client.notifications[mark:]
                  if n.get("method") == "textDocument/publishDiagnostics" and n["params"]["uri"] == uri
                  for d in n["params"]["diagnostics"] if d["code"] == "TRI000"]
        assert len(syntax) >= 3
        paren, quote = len(indent) + statement.index("("), len(indent) + statement.index('"')
        for begin, end in syntax:
            assert begin["line"] == end["line"] == where
            assert begin["character"] in (paren, quote), (begin, end)
            assert end["character"] == begin["character"] + 1, (begin, end)
        assert client.shutdown_and_exit() == 0
    finally:
        client.kill()
