"""The first answer to an edit (issue 31): the findings of the rules of statement scope on what
was just typed, every other finding carried over, sent before the rules of kernel scope run.

Checked here on every rule fixture and on real-world files (with the corpus built): a statement
typed into each kernel (a `tl.device_print`, which TRI022 reports, and an ordinary assignment),
and for each edit
* the whole answer is the one of a lint without a first answer (nothing changed by it);
* the first answer's statement-scope findings are the whole answer's (phase 1 and phase 2 agree);
* every finding of the last lint is in the first answer, moved with its line (nothing flickers);
* a first answer comes exactly when the statement-scope findings changed.
"""
from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from tritonify.diagnostics.registry import SCOPES, STATEMENT_SCOPE, all_rules
from tritonify.diagnostics.settings import Settings
from tritonify.server import lint_worker

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "tests" / "rules" / "fixtures").glob("TRI*.py"))
CORPUS = Path(os.environ.get("TRITONIFY_CORPUS", Path.home() / ".cache" / "tritonify-realworld"))
REAL = ["fla-core/fla/ops/parallax/parallel.py", "liger-kernel/liger_kernel/ops/rms_norm.py",
        "vllm/vllm/v1/attention/ops/triton_unified_attention_diffkv.py", "gemlite/gemlite/triton_kernels/gemv_kernels.py"]
PATH_FACTS = {"vendor_fork"}   # what a helper module says about the file's path, not about a kernel's values
STATEMENT_CODES = {r.code for r in all_rules() if r.rule.scope == STATEMENT_SCOPE}
# the helpers that follow values, types, shapes or launches through a kernel: a rule that uses one
# is of kernel scope
FLOW_HELPERS = ("_types", "_shapes", "_static_sizes", "_memory_flow", "_kernel_flow", "_launch_sites",
                "_tile_values", "_reaching", "_access_calls", "_atomic_calls", "_exp_calls", "_autotune_call")


def test_each_rule_declares_a_known_scope_and_statement_rules_follow_no_flow():
    assert all(r.rule.scope in SCOPES for r in all_rules())
    assert {"TRI022"} <= STATEMENT_CODES
    for r in all_rules():
        if r.rule.scope == STATEMENT_SCOPE:
            text = Path(r.module.__file__).read_text()
            used = [f"{node.module}.{a.name}" for node in ast.walk(ast.parse(text))
                    if isinstance(node, ast.ImportFrom) and (node.module or "").rsplit(".", 1)[-1] in FLOW_HELPERS
                    for a in node.names if a.name not in PATH_FACTS]
            assert not used, f"{r.code} is declared of statement scope but uses {used}"


def _said(f, shift_from: int = 10**9):
    return f.code, f.line + (f.line >= shift_from), f.column


def _kernel_body_starts(text: str) -> list[tuple[int, int]]:
    """(line, indentation) of the first body statement of each top-level kernel."""
    tree = ast.parse(text)
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list):
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):   # a docstring
                if len(node.body) < 2:
                    continue
                first = node.body[1]
            out.append((first.lineno, first.col_offset))
    return out


def _check_edits(path: Path, limit: int = 6) -> int:
    """Type two statements into each kernel of `path` (up to `limit` kernels); the number of edits
    that got a first answer."""
    text = path.read_text()
    settings = Settings(select=("ALL",))
    name = str(path)
    lines = text.split("\n")
    firsts = 0
    for line, indent in _kernel_body_starts(text)[:limit]:
        for statement in ('tl.device_print("typed", 0)', "typed_value = 1"):
            lint_worker._PREVIOUS.clear()
            lint_worker._TREES.clear()
            base, _, _ = lint_worker.lint_with_kernels(text, name, settings, "full")
            edited = "\n".join(lines[:line - 1] + [" " * indent + statement] + lines[line - 1:])
            got = []
            whole, _, _ = lint_worker.lint_with_kernels(edited, name, settings, "incremental",
                                                           first_answer=got.append)
            lint_worker._PREVIOUS.clear()
            lint_worker._TREES.clear()
            lint_worker.lint_with_kernels(text, name, settings, "full")
            plain, _, _ = lint_worker.lint_with_kernels(edited, name, settings, "incremental")
            assert [f.to_dict() for f in whole.findings] == [f.to_dict() for f in plain.findings]
            before = sorted(_said(f, line) for f in base.findings if f.code in STATEMENT_CODES)
            after = sorted(_said(f) for f in whole.findings if f.code in STATEMENT_CODES)
            assert len(got) <= 1
            assert bool(got) == (before != after), (path.name, line, statement, before, after)
            if got:
                firsts += 1
                first = got[0][0]
                assert sorted(_said(f) for f in first.findings if f.code in STATEMENT_CODES) == after
                shown = {_said(f) for f in first.findings}
                assert {_said(f, line) for f in base.findings} <= shown, (path.name, line, statement)
    return firsts


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_first_answer_agrees_with_the_whole_on_each_fixture(path):
    _check_edits(path)


def test_a_typed_debug_print_gets_a_first_answer():
    assert _check_edits(ROOT / "tests" / "rules" / "fixtures" / "TRI001.py") >= 1


@pytest.mark.parametrize("relative", REAL)
def test_first_answer_agrees_with_the_whole_on_real_files(relative):
    path = CORPUS / relative
    if not path.is_file():
        pytest.skip(f"the real-world corpus is not built at {CORPUS} (benchmarks/realworld/corpus.py)")
    _check_edits(path, limit=3)
