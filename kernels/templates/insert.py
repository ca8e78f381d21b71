"""Insert a kernel template into a file: the edits, computed from text alone (pure, no I/O).

``template_insert_edits(text, template, line)`` is what the "Insert template" code action calls.
It returns engine ``Edit``s (1-based lines) that
  * add the template's top-level imports the file lacks, after the file's own import block; an
    import counts as present when the file binds the same name to the same thing, however it is
    spelled (``from triton import language as tl`` satisfies ``import triton.language as tl``);
  * insert the template's body (module docstring turned into comments, imports removed) at ``line``,
    moved above the enclosing top-level definition when ``line`` is inside one, and below the
    import block when ``line`` is above it (the body runs at import time and needs those names);
  * leave out any top-level function, class or assignment the file already defines identically
    (two templates share helpers such as ``_autotune_configs``; inserting one twice adds nothing).
With ``snippet=True`` the body is LSP snippet text (``${1:name}`` ...), for clients that accept
snippet edits; otherwise plain text with the placeholder values filled in.

A template is any object with ``name`` and ``source()``; ``render(**values)`` and
``snippet(**values)`` are used when present (``tritonify.kernels.templates.Template``).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from tritonify.diagnostics.model import Edit
from tritonify.diagnostics.source import split_lines


@dataclass(frozen=True)
class _Binding:
    name: str      # the name bound in the module
    target: str    # what it refers to, dotted
    statement: str


def _import_bindings(stmt: ast.stmt) -> list[_Binding]:
    out = []
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname:
                out.append(_Binding(alias.asname, alias.name, f"import {alias.name} as {alias.asname}"))
            else:
                root = alias.name.split(".")[0]
                out.append(_Binding(root, root if "." in alias.name else alias.name, f"import {alias.name}"))
                if "." in alias.name:  # `import a.b` makes a.b reachable too
                    out.append(_Binding(alias.name, alias.name, f"import {alias.name}"))
    elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module:
        for alias in stmt.names:
            bound = alias.asname or alias.name
            text = f"from {stmt.module} import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
            out.append(_Binding(bound, f"{stmt.module}.{alias.name}", text))
    return out


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _first_line(stmt: ast.stmt) -> int:
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])


def _defined_names(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    return []


def _import_block_end(tree: ast.Module) -> int:
    """Last line of the leading block of docstring / imports (0 when the file starts with code)."""
    end = 0
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or (i == 0 and _is_docstring(stmt)):
            end = stmt.end_lineno or stmt.lineno
        else:
            break
    return end


def _template_text(template: Any, values: dict[str, str], snippet: bool) -> tuple[str, str | None]:
    """(plain text, snippet text or None) of the template's module."""
    if hasattr(template, "render"):
        plain = template.render(**values)
    else:
        if values:
            raise ValueError(f"template {getattr(template, 'name', '?')} takes no placeholders")
        plain = template.source()
    snip = template.snippet(**values) if snippet and hasattr(template, "snippet") else None
    return plain, snip


def _body_lines(plain: str, file_tree: ast.Module | None) -> tuple[list[int], list[str], list[_Binding]]:
    """(kept 1-based line numbers of the template, docstring lines, its top-level import bindings)."""
    lines = plain.splitlines()
    tree = _parse(plain)
    if tree is None:
        return list(range(1, len(lines) + 1)), [], []
    dropped: set[int] = set()
    doc: list[str] = []
    imports: list[_Binding] = []
    existing: dict[str, str] = {}
    if file_tree is not None:
        for stmt in file_tree.body:
            for name in _defined_names(stmt):
                existing[name] = ast.dump(stmt)
    for i, stmt in enumerate(tree.body):
        span = range(_first_line(stmt), (stmt.end_lineno or stmt.lineno) + 1)
        if i == 0 and _is_docstring(stmt):
            doc = stmt.value.value.strip().splitlines()
            dropped.update(span)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)) and not (
                isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
            imports.extend(_import_bindings(stmt))
            dropped.update(span)
        elif any(existing.get(n) == ast.dump(stmt) for n in _defined_names(stmt)):
            dropped.update(span)
    return [n for n in range(1, len(lines) + 1) if n not in dropped], doc, imports


def _squeeze_blank_runs(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if not line.strip() and len(out) >= 2 and not out[-1].strip() and not out[-2].strip():
            continue
        out.append(line)
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def template_insert_edits(text: str, template: Any, line: int, *, snippet: bool = False,
                          **placeholders: str) -> list[Edit]:
    """The edits that insert ``template`` into ``text`` at 1-based ``line``: import edits first
    (none for imports the file has), then the body. With ``snippet`` the body edit's text is an LSP
    snippet. Raises ValueError/KeyError for bad placeholders."""
    file_tree = _parse(text)
    file_lines = split_lines(text)
    plain, snip = _template_text(template, placeholders, snippet)
    kept, doc, imports = _body_lines(plain, file_tree)

    # imports the file lacks
    have = set()
    if file_tree is not None:
        for stmt in file_tree.body:
            have.update((b.name, b.target) for b in _import_bindings(stmt))
    missing: list[str] = []
    for b in imports:
        if (b.name, b.target) not in have and b.statement not in missing:
            missing.append(b.statement)
            have.add((b.name, b.target))
    import_end = _import_block_end(file_tree) if file_tree is not None else 0

    # where the body goes
    at = max(1, min(line, len(file_lines) + 1))
    if file_tree is not None:
        for stmt in file_tree.body:
            if _first_line(stmt) <= at <= (stmt.end_lineno or stmt.lineno) and not isinstance(
                    stmt, (ast.Import, ast.ImportFrom)) and not (stmt is file_tree.body[0] and _is_docstring(stmt)):
                at = _first_line(stmt)
                break
    at = max(at, import_end + 1)

    source_lines = (snip if snip is not None else plain).splitlines()
    header = [f"# {d}".rstrip() if d.strip() else "#" for d in doc]
    if snip is not None:
        header = [h.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}") for h in header]
    code = _squeeze_blank_runs([source_lines[n - 1] for n in kept if n - 1 < len(source_lines)])
    body = _squeeze_blank_runs(header + [""] + code) if code else []  # nothing new: no header either
    edits: list[Edit] = []
    if missing:
        import_text = "".join(m + "\n" for m in missing)
        if import_end == 0 and file_lines and file_lines[0].strip():
            import_text += "\n"  # the file starts with code: keep the imports apart
        edits.append(Edit.insert(import_end + 1, 0, import_text))
    if not body:
        return edits
    before = file_lines[at - 2] if 1 <= at - 1 <= len(file_lines) else ""
    after = file_lines[at - 1] if at - 1 < len(file_lines) else ""
    lead = "\n\n" if before.strip() or (missing and at == import_end + 1 and import_end) else ""
    trail = "\n\n" if after.strip() else ""
    if at > len(file_lines) and text and not text.endswith("\n"):
        lead = "\n" + lead
    edits.append(Edit.insert(at, 0, lead + "\n".join(body) + "\n" + trail))
    return edits
