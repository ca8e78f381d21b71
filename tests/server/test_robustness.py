"""Random edits and truncations of real kernel files, sent as an editor sends them
(incremental didChange in UTF-16 units), each followed by a request at a random place.

Every request must be answered (a result, not an error), and after the last edit the
diagnostics the server publishes must be exactly those of the text the client holds: a check
that the server's copy of the document never drifts from the client's.
"""
from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tritonify.diagnostics.settings import Settings
from tritonify.server.diagnostics_feature import CONFIRM_IDLE_S
from tritonify.server.lint_worker import lint_with_kernels
from tritonify.server.positions import UTF16, LineIndex
from tests.server.rawclient import RawClient, lsp_position

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*ROOT.glob("tests/rules/fixtures/TRI*.py"), *ROOT.glob("examples/triton/*.py"),
                  *ROOT.glob("examples/clean/*.py")])[:12]
TEXTS = [p.read_text(encoding="utf-8") for p in SOURCES]
PIECES = ["\n", "\r\n", "\r", "    ", "(", ")", ":", "@triton.jit\n", "def k(", "libdevice.tanh(", "tl.", "é", "😋",
          "\x00", "\x0c", "\u2028", "# noqa: TRI001", "'''", "x", "=", "1"]
_uris = itertools.count()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    client = RawClient()
    client.initialize(root, capabilities={"general": {"positionEncodings": ["utf-16"]}})
    client.root = root
    yield client
    client.kill()


edit = st.tuples(
    st.floats(0, 1), st.floats(0, 1),
    st.one_of(st.lists(st.sampled_from(PIECES), max_size=6).map("".join), st.text(max_size=8)),
    st.booleans(),   # truncate: delete from the start point to the end
)


def _offset(text: str, fraction: float) -> int:
    o = int(fraction * len(text))
    if 0 < o < len(text) and text[o - 1] == "\r" and text[o] == "\n":
        o += 1   # no LSP position lies inside a \r\n
    return o


@pytest.mark.skipif(not TEXTS, reason="no kernel files to edit")
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(base=st.sampled_from(range(len(TEXTS))) if TEXTS else st.just(0), edits=st.lists(edit, min_size=1, max_size=4),
       probes=st.lists(st.tuples(st.sampled_from(["hover", "codeAction", "codeLens"]), st.floats(0, 1)), min_size=1, max_size=6))
def test_random_edits_are_survived_and_tracked(server, base, edits, probes):
    c = server
    path = c.root / f"doc{next(_uris)}.py"
    uri = path.as_uri()
    text = TEXTS[base]
    c.open(uri, text)
    version = 1
    mark = c.mark()
    for (a, b, insert, truncate), (probe, where) in zip(edits, itertools.cycle(probes)):
        start = _offset(text, min(a, b))
        end = len(text) if truncate else _offset(text, max(a, b))
        rng = {"start": lsp_position(text, start), "end": lsp_position(text, end)}
        version += 1
        c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                            "contentChanges": [{"range": rng, "text": "" if truncate else insert}]})
        text = text[:start] + ("" if truncate else insert) + text[end:]
        pos = lsp_position(text, _offset(text, where))
        params = {"textDocument": {"uri": uri}}
        if probe != "codeLens":
            params["position" if probe == "hover" else "range"] = pos if probe == "hover" else {"start": pos, "end": pos}
        if probe == "codeAction":
            params["context"] = {"diagnostics": []}
        response = c.request(f"textDocument/{probe}", params, timeout=30)
        assert "result" in response, response
    c.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    c.diagnostics(uri, version=version, start=mark, timeout=30)
    # the last publication of that version, once the full lint that confirms it had its time (a
    # publication equal to the one before is not sent again, so a save need not publish); on a loaded
    # machine the confirming lint can take longer than its idle delay: wait for it, up to 30 s
    # what the server's full lint says of the final text (a text that does not parse keeps the findings of
    # the statements that do, beside its TRI000, where `tritonify check` reports the TRI000 alone)
    expected = lint_with_kernels(text, str(path), Settings(), "full")[0].findings
    index = LineIndex(text, UTF16)
    want = sorted((f.code, index.range(f.line, f.column, f.end_line, f.end_column).start.line) for f in expected)
    deadline = time.monotonic() + CONFIRM_IDLE_S + 30.0
    time.sleep(CONFIRM_IDLE_S + 1.0)
    while True:
        published = [n["params"]["diagnostics"] for n in c.notifications[mark:]
                     if n.get("method") == "textDocument/publishDiagnostics" and n["params"]["uri"] == uri
                     and n["params"].get("version") == version][-1]
        got = sorted((d["code"], d["range"]["start"]["line"]) for d in published)
        if got == want or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    assert got == want
    c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
