"""Entry points the engine calls for CUDA: `.cu`/`.cuh` files and CUDA embedded in Python.

Python host code often carries CUDA as a string compiled at run time:

    torch.utils.cpp_extension.load_inline(name, cpp_sources, cuda_sources=SRC)   # nvcc
    cupy.RawKernel(code, "name")                                                  # NVRTC
    cupy.RawModule(code=SRC)                                                      # NVRTC

`check_python_source` finds those strings statically (any import alias, resolved with
`ImportMap`; the string written in the call, in a list/tuple, behind `textwrap.dedent`, or in a
module-level variable), runs the CUDA rules on each, and reports at the exact line and column of
the `.py` file where the CUDA characters are written. f-strings are skipped: their text is
only known at run time.
"""
from __future__ import annotations

import ast
import logging
from typing import Iterable, Iterator

from tritonify.diagnostics.cuda import syntax
from tritonify.diagnostics.cuda.context import CudaContext
from tritonify.diagnostics.cuda.positions import map_string_literal, physical_lines
from tritonify.diagnostics.model import Finding
from tritonify.diagnostics.registry import RegisteredRule
from tritonify.diagnostics.source import SourceFile
from tritonify.diagnostics.triton_ast import ImportMap, keyword

log = logging.getLogger(__name__)

LOAD_INLINE = "torch.utils.cpp_extension.load_inline"
CUPY_KERNELS = {"cupy.RawKernel": "cupy.RawKernel", "cupy.RawModule": "cupy.RawModule",
                "cupy.cuda.RawKernel": "cupy.RawKernel", "cupy.cuda.RawModule": "cupy.RawModule"}
DEDENT = {"textwrap.dedent", "inspect.cleandoc"}
_MARKERS = ("load_inline", "RawKernel", "RawModule")


def might_embed_cuda(source: SourceFile) -> bool:
    """Cheap pre-check: could this Python file pass CUDA source to a run-time compiler?"""
    return mentions_cuda_compiler(source.text)


def mentions_cuda_compiler(text: str) -> bool:
    """The same test on the text alone (the engine asks it before parsing)."""
    return any(marker in text for marker in _MARKERS)


def run_rules(ctx: CudaContext, rules: Iterable[RegisteredRule]) -> list[Finding]:
    """Run CUDA rules on one context; a failing rule is logged and does not hide the others."""
    findings: list[Finding] = []
    depth = syntax.max_depth(ctx.tree.root_node)
    if depth > syntax.MAX_DEPTH:
        raise syntax.TooDeeplyNested(f"not analysed: too deeply nested (over {syntax.MAX_DEPTH} levels)")
    for reg in rules:
        if reg.rule.language != "cuda":
            continue
        ctx.rule = reg.rule
        try:
            findings.extend(reg.check(ctx))
        except RecursionError:
            log.warning("%s: %s gave up on a deeply nested expression", ctx.path, reg.code)
        except Exception:  # one broken rule must not hide the others
            log.exception("rule %s failed on %s", reg.code, ctx.path)
    return [f for f in findings if not ctx.is_suppressed(f)]


def check_cuda_text(text: str, path: str, rules: list[RegisteredRule]) -> Iterable[Finding]:
    """Lint a `.cu`/`.cuh` file's text (compiled by nvcc)."""
    if not rules:
        return []
    return run_rules(CudaContext(text=text, path=path, compiler="nvcc", origin="file"), rules)


# ---- CUDA embedded in Python --------------------------------------------------------------------

def _module_strings(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level `NAME = <expr>` bindings (the last one wins, as at run time for a
    module executed top to bottom)."""
    out: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            out[stmt.target.id] = stmt.value
    return out


class _Finder:
    """Finds the string constants that reach a CUDA compiler, with the compiler that gets them."""

    def __init__(self, source: SourceFile):
        self.source = source
        self.imports = ImportMap(source.tree)
        self.module_values = _module_strings(source.tree)

    def strings(self) -> Iterator[tuple[ast.Constant, str, str]]:
        """(string node, compiler, origin) for every embedded CUDA source, each node once."""
        seen: set[int] = set()
        for node in ast.walk(self.source.tree):
            if not isinstance(node, ast.Call):
                continue
            path = self.imports.resolve(node.func) or ""
            if path == LOAD_INLINE:
                code = keyword(node, "cuda_sources")
                expr = code.value if code is not None else (node.args[2] if len(node.args) > 2 else None)
                found = (expr, "nvcc", "load_inline")
            elif path in CUPY_KERNELS:
                code = keyword(node, "code")
                expr = code.value if code is not None else (node.args[0] if node.args else None)
                backend = keyword(node, "backend")
                compiler = "nvcc" if backend is not None and isinstance(backend.value, ast.Constant) and backend.value.value == "nvcc" else "nvrtc"
                found = (expr, compiler, CUPY_KERNELS[path])
            else:
                continue
            expr, compiler, origin = found
            for const in self._constants(expr, depth=0):
                if id(const) not in seen:
                    seen.add(id(const))
                    yield const, compiler, origin

    def _constants(self, expr: ast.expr | None, depth: int) -> Iterator[ast.Constant]:
        if expr is None or depth > 4:
            return
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            yield expr
        elif isinstance(expr, (ast.List, ast.Tuple)):
            for elt in expr.elts:
                yield from self._constants(elt, depth + 1)
        elif isinstance(expr, ast.Name) and expr.id in self.module_values:
            yield from self._constants(self.module_values[expr.id], depth + 1)
        elif isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
            if (self.imports.resolve(expr.func) or "") in DEDENT:
                yield from self._constants(expr.args[0], depth + 1)


def check_python_source(source: SourceFile, rules: list[RegisteredRule]) -> Iterable[Finding]:
    """Lint the CUDA strings a Python file hands to nvcc (load_inline) or NVRTC (cupy)."""
    if source.tree is None or not rules:
        return []
    lines = physical_lines(source.text)
    findings: list[Finding] = []
    for const, compiler, origin in _Finder(source).strings():
        mapping = map_string_literal(lines, const)
        if mapping is None:
            log.debug("%s:%s: CUDA string not mapped (escapes or prefixes not understood)", source.path, const.lineno)
            continue
        ctx = CudaContext(text=mapping.value, path=source.path, positions=mapping, compiler=compiler, origin=origin)
        try:
            findings.extend(run_rules(ctx, rules))
        except syntax.TooDeeplyNested as exc:
            log.warning("%s:%s: CUDA string %s", source.path, const.lineno, exc)
    return findings
