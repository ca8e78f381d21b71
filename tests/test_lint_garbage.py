"""Linting a file leaves no reference cycles behind: the file's tree and every fact computed on
it are freed by reference counting when the lint returns. A cycle (a cached object that refers
back to the context, a recursive closure holding its results) keeps all of it until the cyclic
garbage collector walks it, which took about a tenth of the lint time on the real-world corpus."""
from __future__ import annotations

import collections
import gc
from pathlib import Path

import pytest

from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").rglob("*.py"))


def _cyclic_garbage(text: str, path: str) -> list[object]:
    """Objects that only the cyclic collector would free after one lint of `text`."""
    settings = Settings(select=("ALL",))
    lint_text(text, path, settings)   # imports, registry, workspace modules: outside the count
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        lint_text(text, path, settings)
        gc.collect()
        found = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()
    return found


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_lint_leaves_no_cycles(path: Path) -> None:
    garbage = _kept(_cyclic_garbage(path.read_text(encoding="utf-8"), str(path)))
    kinds = collections.Counter(getattr(o, "__qualname__", None) or type(o).__qualname__ for o in garbage
                                if type(o).__module__ != "ast")
    assert not garbage, f"{len(garbage)} objects left in reference cycles, e.g. {kinds.most_common(8)}"


def _kept(garbage: list[object]) -> list[object]:
    """The costly part of cyclic garbage: the file's tree nodes and Tritonify's own objects
    (a few cells of the standard library's own recursive helpers, `ast.dump`'s, hold neither)."""
    def costly(o: object) -> bool:
        module = type(o).__module__ or ""
        if module == "ast" or module.startswith("tritonify"):
            return True
        return callable(o) and (getattr(o, "__module__", "") or "").startswith("tritonify")
    return [o for o in garbage if costly(o)]


def test_the_check_sees_a_cycle() -> None:
    """The measurement itself: a cycle made during the lint is counted."""
    import tritonify.diagnostics.context as context

    original = context.PythonContext.release
    context.PythonContext.release = lambda self: None   # keep `ctx.target` -> ctx and the rest
    try:
        text = (ROOT / "examples" / "triton").joinpath(sorted(p.name for p in (ROOT / "examples" / "triton").glob("*.py"))[0])
        assert _kept(_cyclic_garbage(text.read_text(encoding="utf-8"), str(text)))
    finally:
        context.PythonContext.release = original
