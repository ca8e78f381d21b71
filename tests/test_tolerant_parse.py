"""Typing without flicker: while a statement is half typed, the lint worker lints the file with
that statement neutralised (diagnostics.reparse.tolerant_parse), so the syntax error shows where
it is (TRI000 on its line) and every other finding and kernel stays, where the whole file used
to give one TRI000 and no kernel (the code lenses vanished) on almost every key."""
from __future__ import annotations

import ast
import random
import warnings
from pathlib import Path

import pytest

from tritonify.diagnostics.reparse import tolerant_parse
from tritonify.diagnostics.settings import Settings
from tritonify.server import lint_worker
from tritonify.server.lint_worker import lint_with_kernels

ROOT = Path(__file__).resolve().parents[1]
GLU = ROOT / "examples" / "triton" / "activation_tanh_glu.py"
MULTI = '''import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def first(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs,
                mask=offs < n,
                other=0.0)
    for _ in range(4):
        x = 0.5 * x * (1 + libdevice.tanh(x))
    tl.store(y_ptr + offs, x, mask=offs < n)


@triton.jit
def second(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    for _ in range(4):
        x = 0.5 * x * (1 + libdevice.tanh(x))
    tl.store(y_ptr + offs, x, mask=offs < n)
'''


@pytest.fixture(autouse=True)
def fresh_worker_state():
    lint_worker._PREVIOUS.clear()
    lint_worker._TREES.clear()
    yield
    lint_worker._PREVIOUS.clear()
    lint_worker._TREES.clear()


def _lint(text: str, path: str, mode: str = "incremental"):
    result, spans, _ = lint_with_kernels(text, path, Settings(), mode)
    return result, spans


def _others(result) -> list[tuple[str, int]]:
    return sorted((f.code, f.line) for f in result.findings if f.code != "TRI000")


def _parses(text: str) -> bool:
    try:
        _parse(text)
    except SyntaxError:
        return False
    return True


def _parse(text: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # SyntaxWarning of the random breaks ("invalid decimal literal")
        return ast.parse(text)


def test_typing_a_statement_into_a_kernel_keeps_every_other_finding_and_kernel(tmp_path):
    path = str(tmp_path / "glu.py")
    text = GLU.read_text()
    lines = text.split("\n")
    where = next(i for i, line in enumerate(lines) if "libdevice.tanh(a)" in line) + 1   # after it (0-based)
    before, spans = _lint(text, path)
    assert before.findings and spans
    moved = sorted((code, line + (line > where)) for code, line in _others(before))
    statement = "z = tl.load(x_ptr + rows[:, None] * (d_in + 1), mask=rows < n_rows"
    indent = "        "
    broken_keys = 0
    for n in range(1, len(statement) + 1):
        typed = "\n".join(lines[:where] + [indent + statement[:n]] + lines[where:])
        result, now = _lint(typed, path)
        assert [s.name for s in now] == [s.name for s in spans], statement[:n]
        if _parses(typed):
            continue
        broken_keys += 1
        assert set(moved) <= set(_others(result)), statement[:n]
        syntax = [f for f in result.findings if f.code == "TRI000"]
        assert len(syntax) == 1 and syntax[0].line == where + 1, (statement[:n], syntax)
        assert result.error is None   # nothing for the log: the finding says it
    assert broken_keys > len(statement) // 2   # the case was exercised


def test_breaking_a_continuation_line_keeps_the_other_kernels_findings(tmp_path):
    path = str(tmp_path / "multi.py")
    before, _ = _lint(MULTI, path)
    assert _others(before) == [("TRI001", 13), ("TRI001", 22)]
    broken = MULTI.replace("                mask=offs < n,\n", "                mask=offs < n,,\n")
    result, spans = _lint(broken, path)
    assert [s.name for s in spans] == ["first", "second"]
    assert _others(result) == [("TRI001", 13), ("TRI001", 22)]
    assert [f.line for f in result.findings if f.code == "TRI000"] == [10]


def test_a_full_lint_of_a_broken_text_is_tolerant_too(tmp_path):
    """The lint that confirms once typing pauses (in the same worker, mode "full") gives the
    same findings, so the confirmed diagnostics do not replace them with one TRI000."""
    path = str(tmp_path / "glu.py")
    text = GLU.read_text()
    broken = text.replace("y = libdevice.tanh(a) * b", "y = libdevice.tanh(a) * (b")
    incremental, _ = _lint(broken, path)
    lint_worker._TREES.clear()
    lint_worker._PREVIOUS.clear()
    full, spans = _lint(broken, path, "full")
    assert spans and _others(full) == _others(incremental)
    assert [f.code for f in full.findings].count("TRI000") == 1


def test_random_breaks_give_a_text_that_parses_and_differs_only_on_blanked_lines():
    rng = random.Random(4)
    good = MULTI
    good_tree = ast.parse(good)
    lines = good.split("\n")
    breakers = ["(", ")", ",,", ":", "x =", "[", "'", "def", "if x", "+"]
    made = 0
    for _ in range(200):
        i = rng.randrange(len(lines))
        at = rng.randint(0, len(lines[i]))
        new = list(lines)
        new[i] = lines[i][:at] + rng.choice(breakers) + lines[i][at:]
        if rng.random() < 0.3:
            new.insert(i + 1, lines[i][: len(lines[i]) - len(lines[i].lstrip())] + rng.choice(breakers))
        text = "\n".join(new)
        if _parses(text):
            continue
        try:
            _parse(text)
        except SyntaxError as exc:
            error = exc
        tolerant = tolerant_parse(text, good, good_tree, error)
        if tolerant is None:
            continue
        made += 1
        assert ast.dump(tolerant.tree) == ast.dump(_parse(tolerant.text))
        old, fixed = text.split("\n"), tolerant.text.split("\n")
        assert len(old) == len(fixed)
        assert all(a == b for n, (a, b) in enumerate(zip(old, fixed), 1) if n not in tolerant.blanked)
        assert len(tolerant.blanked) <= 8, tolerant.blanked   # a statement, never a whole kernel
    assert made >= 100


def test_a_finding_on_the_line_above_the_typed_one_stays_with_its_fix(tmp_path):
    """TRI022's fix removes its whole line, up to column 0 of the next one, where the statement is
    being typed: the finding and its fix stay (seen in the real editor: the row above the typed
    line vanished on every key that left it incomplete)."""
    path = str(tmp_path / "print.py")
    lines = MULTI.split("\n")
    at = next(i for i, line in enumerate(lines) if "def second" in line) + 2
    lines.insert(at, '    tl.device_print("here", x)')
    text = "\n".join(lines)
    before, _ = _lint(text, path)
    printed = [f for f in before.findings if f.code == "TRI022"]
    assert len(printed) == 1 and printed[0].fixes
    statement = "y = tl.load(x_ptr + offs"
    for n in range(1, len(statement) + 1):
        typed = "\n".join(lines[:at + 1] + ["    " + statement[:n]] + lines[at + 1:])
        result, _ = _lint(typed, path)
        still = [f for f in result.findings if f.code == "TRI022"]
        assert [f.line for f in still] == [at + 1], statement[:n]
        assert [fix.title for fix in still[0].fixes] == [fix.title for fix in printed[0].fixes], statement[:n]
