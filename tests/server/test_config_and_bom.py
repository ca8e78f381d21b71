"""A wrong-typed `[tool.tritonify]` value is shown in the editor (a warning message and a
diagnostic on its line of pyproject.toml, naming the file, the key and the type expected) and the
lint goes on with the default for that key only; a UTF-8 BOM at the start of a document is read as
the command line reads it (no false TRI000)."""
from __future__ import annotations

import textwrap

import pytest

from tests.server.conftest import KERNEL, TANH_LINE
from tests.server.rawclient import RawClient


@pytest.fixture
def raw():
    clients = []

    def make(**kwargs):
        c = RawClient(**kwargs)
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.kill()


BROKEN = textwrap.dedent('''\
    [project]
    name = "demo"

    [tool.tritonify]
    severity = { TRI001 = "error" }
    select = 5
''')


def test_a_wrong_typed_setting_is_shown_and_linting_goes_on_with_the_good_keys(raw, workspace):
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text(BROKEN)
    c = raw()
    c.initialize(workspace)
    uri = (workspace / "kernel.py").as_uri()
    c.open(uri, KERNEL)
    diags = c.diagnostics(uri, timeout=20)
    tri001 = [d for d in diags if d["code"] == "TRI001"]
    assert tri001 and tri001[0]["severity"] == 1          # linted, and the good key (severity) kept
    shown = c.wait_notification("window/showMessage", lambda p: "select" in p["message"])
    assert str(pyproject) in shown["message"] and "expected a list" in shown["message"]
    assert shown["type"] == 2
    on_file = c.diagnostics(pyproject.as_uri(), timeout=10)
    assert len(on_file) == 1 and on_file[0]["range"]["start"]["line"] == 5      # the `select = 5` line
    assert "select" in on_file[0]["message"] and "default" in on_file[0]["message"]

    # fixed and saved: the diagnostic on pyproject.toml goes away
    mark = c.mark()
    pyproject.write_text(BROKEN.replace("select = 5", 'select = ["TRI"]'))
    c.notify("textDocument/didSave", {"textDocument": {"uri": pyproject.as_uri()}})
    assert c.diagnostics(pyproject.as_uri(), timeout=10, start=mark) == []
    assert c.shutdown_and_exit() == 0


def test_a_byte_order_mark_is_not_a_syntax_error(raw, workspace):
    c = raw()
    c.initialize(workspace)
    uri = (workspace / "bom.py").as_uri()
    c.open(uri, "\ufeff" + KERNEL)
    diags = c.diagnostics(uri, timeout=20)
    assert "TRI000" not in [d["code"] for d in diags], diags
    tri001 = [d for d in diags if d["code"] == "TRI001"]
    assert tri001 and tri001[0]["range"]["start"]["line"] == TANH_LINE
    # the same finding, at the same place, as without the mark
    plain = (workspace / "plain.py").as_uri()
    c.open(plain, KERNEL)
    assert [d["range"] for d in c.diagnostics(plain, timeout=20) if d["code"] == "TRI001"] == [tri001[0]["range"]]
    assert c.shutdown_and_exit() == 0


def test_columns_on_the_first_line_move_past_the_mark_and_no_other():
    """The engine reads the text without the mark; its line-1 columns (findings and fix edits)
    are moved by one to land on the editor's text, which holds it."""
    from tritonify.diagnostics.engine import FileResult
    from tritonify.diagnostics.model import Edit, Finding, Fix
    from tritonify.server.analysis import _shift_line_one, without_bom

    assert without_bom("\ufeffx = 1\n") == "x = 1\n" and without_bom("x\ufeff") == "x\ufeff"
    edits = (Edit(1, 0, 1, 6, "import"), Edit(2, 0, 2, 3, "abc"), Edit(1, 7, 2, 1, "z"))
    result = FileResult("k.py", [Finding("TRI001", "m", 1, 4, 1, 9, fixes=[Fix("t", edits)]),
                                 Finding("TRI002", "m", 2, 4, 3, 9)])
    first, second = _shift_line_one(result).findings
    assert (first.column, first.end_column) == (5, 10)
    assert [(e.start_column, e.end_column) for e in first.fixes[0].edits] == [(1, 7), (0, 3), (8, 1)]
    assert (second.column, second.end_column) == (4, 9)
