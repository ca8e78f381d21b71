"""diagnostics/reparse.py: the tree of an edited text, parsing again only the statements touched,
is the tree `ast.parse` gives for the whole text (positions included), or None."""
from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from tritonify.diagnostics.reparse import reparse

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted([*(ROOT / "examples").rglob("*.py"), *(ROOT / "kernels").rglob("*.py"), *(ROOT / "diagnostics").glob("*.py")])
SNIPPETS = ["    x = 1", "x = 1", ")", "(", '"""', "def g():", "    ", "", "@triton.jit", "    return", "\\", "'",
            "# note", "else:", "  y", "a; b", "if x:", "\t", "class C:", "    pass"]


def _dump(tree):
    return ast.dump(tree, include_attributes=True)


def _edit(lines: list[str], rng: random.Random) -> list[str]:
    """One edit that keeps the number of lines: a line replaced, or a character typed or deleted."""
    out = list(lines)
    k = rng.randrange(len(out))
    op = rng.randrange(4)
    if op == 0:
        out[k] = rng.choice(SNIPPETS)
    elif op == 1 and out[k]:
        p = rng.randrange(len(out[k]))
        out[k] = out[k][:p] + out[k][p + 1:]
    elif op == 2:
        p = rng.randrange(len(out[k]) + 1)
        out[k] = out[k][:p] + rng.choice("xa(): ,'\"#=\\[]") + out[k][p:]
    else:
        out[k] += rng.choice([" = 1", "(", ":", " + y", "  # x"])
    return out


def test_random_edits_give_the_tree_of_a_full_parse_or_none():
    assert len(FILES) > 20
    rng = random.Random(19)
    reused = failed = 0
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        lines = text.split("\n")
        for _ in range(6):
            new = "\n".join(_edit(lines, rng))
            try:
                full = _dump(ast.parse(new))
            except SyntaxError:
                full = None
            got = reparse(text, tree, new)
            if got is None:
                failed += full is not None
                continue
            assert full is not None, f"{path.name}: a tree for a text that does not parse"
            assert _dump(got) == full, f"{path.name}: the tree differs from a full parse"
            reused += 1
            assert _dump(tree) == _dump(ast.parse(text)), "the old tree was changed"
    assert reused > 100 and failed <= reused // 20   # most edits that parse are parsed in part


def test_typing_a_statement_into_a_kernel_key_by_key_reparses_each_key_that_parses():
    text = (ROOT / "examples" / "triton" / "activation_tanh_glu.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    lines = text.split("\n")
    body_line = next(i for i, line in enumerate(lines) if "tl.load(" in line)
    indent = lines[body_line][: len(lines[body_line]) - len(lines[body_line].lstrip())]
    lines.insert(body_line + 1, "")
    base = "\n".join(lines)
    old, old_tree = base, ast.parse(base)
    typed, parsed = "", 0
    for key in "tmp_edit = 1":
        typed += key
        lines[body_line + 1] = indent + typed
        new = "\n".join(lines)
        got = reparse(old, old_tree, new)
        try:
            full = ast.parse(new)
        except SyntaxError:
            assert got is None
            continue
        assert got is not None and _dump(got) == _dump(full)
        old, old_tree, parsed = new, got, parsed + 1
    assert parsed == 10   # every key but the two after "=" parses
    assert reparse(text, tree, text) is tree


def test_an_edit_that_adds_or_removes_a_line_or_uses_cr_line_breaks_is_parsed_in_full():
    text = "import triton\n\n\ndef f():\n    return 1\n"
    tree = ast.parse(text)
    assert reparse(text, tree, text.replace("return 1", "x = 1\n    return x")) is None
    assert reparse(text, tree, text.replace("\n\n\n", "\n\n")) is None
    crlf = text.replace("\n", "\r\n")
    assert reparse(crlf, ast.parse(crlf), crlf.replace("1", "2")) is None
    assert reparse(text, None, text.replace("1", "2")) is None


@pytest.mark.parametrize("old, new", [
    ("a = 1; b = 2\nc = 3\n", "a = 1; b = 5\nc = 3\n"),          # statements sharing a line
    ("x = (1,\n     2); y = 3\nz = 4\n", "x = (1,\n     2); y = 7\nz = 4\n"),
    ("def f():\n    pass\n\nz = 1\n", "def f():\n    pass\n    q\nz = 1\n"),   # a line that joins the function before it
    ("@dec\ndef f():\n    pass\n", "@deco\ndef f():\n    pass\n"),  # a decorator edited
])
def test_edits_at_the_edges_of_statements_give_the_full_parse(old, new):
    got = reparse(old, ast.parse(old), new)
    assert got is not None and _dump(got) == _dump(ast.parse(new))
