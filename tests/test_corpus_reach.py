"""Reach: every file that defines a Triton kernel has its kernels found, however it imports
Triton (issue 13, item 3). Runs on the committed fixture package always, and on the
real-world corpus (benchmarks/realworld/corpus.py) when it has been built."""
from __future__ import annotations

import ast
import os
import warnings
from pathlib import Path

import pytest

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.source import SourceFile
from tritonify.diagnostics.triton_ast import dotted
from tritonify.diagnostics.workspace_index import WorkspaceIndex

FIXTURE = Path(__file__).parent / "fixtures" / "reexport_pkg"
CORPUS = Path(os.environ.get("TRITONIFY_CORPUS", Path.home() / ".cache" / "tritonify-realworld"))

# How a kernel's decorator is spelled, whatever the names are bound to: the oracle knows no imports.
SPELLINGS = {"triton.jit", "triton.autotune", "triton.heuristics", "jit", "autotune", "heuristics"}


def spelled_kernels(tree: ast.Module) -> list[ast.FunctionDef]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(dotted(d.func if isinstance(d, ast.Call) else d) in SPELLINGS for d in node.decorator_list):
                out.append(node)
    return out


def reach(files: list[Path], index: WorkspaceIndex) -> tuple[int, list[str]]:
    """(files with a kernel decorator, files where the engine does not find every such function)."""
    defining, missed = 0, []
    for f in files:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            source = SourceFile.from_bytes(f.read_bytes(), str(f))
        if source.tree is None:
            continue
        expected = spelled_kernels(source.tree)
        if not expected:
            continue
        defining += 1
        found = {k.node for k in PythonContext(source, workspace=index).kernels}
        lost = [fn.name for fn in expected if fn not in found]
        if lost:
            missed.append(f"{f}: {', '.join(lost)}")
    return defining, missed


def test_fixture_package_every_kernel_found():
    files = sorted(FIXTURE.rglob("*.py"))
    defining, missed = reach(files, WorkspaceIndex())
    # ops/softmax.py (@triton.jit), ops/activation.py (@jit), utils/math.py (two helpers);
    # ops/renamed.py spells none like a kernel (next test)
    assert defining == 3
    assert missed == []


def test_fixture_package_kernels_not_spelled_like_kernels_are_found_too():
    source = SourceFile.from_text((FIXTURE / "ops" / "renamed.py").read_text(), str(FIXTURE / "ops" / "renamed.py"))
    names = [k.name for k in PythonContext(source, workspace=WorkspaceIndex()).kernels]
    assert names == ["scale_kernel", "add_kernel", "neg_kernel"]   # @tjit, @compat.triton.jit, @kernel


@pytest.mark.skipif(not (CORPUS / "MANIFEST.json").is_file(), reason="real-world corpus not built")
def test_real_world_corpus_every_kernel_found():
    packages = sorted(p for p in CORPUS.iterdir() if p.is_dir() and not p.name.startswith("."))
    index = WorkspaceIndex()
    total, missed = 0, []
    for p in packages:
        defining, lost = reach(sorted(p.rglob("*.py")), index)
        total += defining
        missed += lost
    assert total > 2000            # the corpus as built: ~2,100 files define a kernel
    assert missed == [], f"{len(missed)} files with kernels not found, e.g. {missed[:5]}"
