"""Lint an edited file again by re-linting only the kernels and statements the edit touched.

A Python file is cut into segments: each top-level `@triton.jit` function (with its
decorators) is one, and every other top-level statement (an import, a constant, a launcher, a
class) is an outside statement. Each knows the module-level names it reads and (statements) the
names it binds. When a new text keeps the segments' names and order, the edit is followed:

* the changed statements (added, removed or edited) bind names; every unchanged statement that
  reads one of those is affected too, and binds its own names in turn (`B = A * 2` after an edit
  of `A`);
* the kernels to lint again are the edited ones, those that read an affected name, and those
  whose launch in an affected statement could have changed (`_launches_changed`, on the simple
  statements of the launcher: the launch was edited, added or removed, or a statement the edit
  touched binds a name the launch reads, directly or through the assignments it is computed
  from, or guards on one: `assert`, `if`, a call); their findings are replaced;
* the affected statements get their findings from the same lint, except on the lines of the
  launches of the kernels not linted again, which keep theirs; all others keep theirs, moved
  with their lines (a launch checked against a kernel whose body changed among them).

That lint is one, of a reduced text: the outside as it is, the kernels to lint again, the
kernels they call (helpers) and that call them (so a helper stays a helper); every other
kernel's lines are left blank so that line numbers stay those of the file. It reuses the parsed
tree (no second parse). Which kernels are dead (diagnostics.unlaunched) is the whole file's answer
there too: the reduced source carries the kernels it left out and the names their bodies refer to
(`ReducedSource`), so a kernel launched only from one left out, or a dead one the edit is in, is
judged as the full lint judges it.

Such a result is `exact=False`: a finding that depends on code the reduced text leaves out (or
on a kernel's body, at an unchanged launch) is the one of the last full lint until the next full lint (the language server runs one once
typing pauses). An edit of an import (at module level, also inside `try`/`if`) may change what
the names it binds mean everywhere: the file is linted in full when some kernel or statement
reads one of them (or the import is a star import), as is any change the segments cannot follow
(a kernel added, removed or renamed, a syntax error, other settings); an import nothing reads
yet (`import ma` on the way to `import math`) is followed like any other statement.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from difflib import SequenceMatcher
from typing import Callable

from tritonify.diagnostics.engine import FileResult, lint_source
from tritonify.diagnostics.model import Finding
from tritonify.diagnostics.registry import STATEMENT_SCOPE, all_rules
from tritonify.diagnostics.settings import Settings
from tritonify.diagnostics.source import SourceFile, split_lines
from tritonify.diagnostics.triton_ast import ImportMap, Kernel, find_kernels, walk_nodes
from tritonify.diagnostics.unlaunched import references

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass(frozen=True)
class Segment:
    """One top-level kernel: its name, first line (decorators included) and last line (1-based),
    its text and the module-level names it reads."""

    name: str
    first: int
    last: int
    text: str
    reads: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Statement:
    """One top-level statement outside the kernels: its lines (decorators included), text, the
    module-level names it reads and binds, and whether it imports (at module level)."""

    first: int
    last: int
    text: str
    reads: frozenset[str]
    binds: frozenset[str]
    imports: bool


@dataclass
class Layout:
    """Where the kernels and the outside statements of one text are."""

    lines: list[str]
    segments: list[Segment]
    statements: list[Statement]


# ---- what a piece of code reads and binds ------------------------------------------------------

def _names(node: ast.AST) -> tuple[set[str], set[str]]:
    """(loaded, stored) names in `node` and below, each a flat walk (`walk_nodes`: ast.walk's
    nodes but the context and operator objects, which hold no name)."""
    loads, stores = set(), set()
    for n in walk_nodes(node):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else stores).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not node:
            stores.add(n.name)
        elif isinstance(n, ast.arg):
            stores.add(n.arg)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            loads.update(n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            stores.add(n.name)
    return loads, stores


def function_reads(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The module-level names a function reads: its decorators, defaults and annotations (run
    where it is defined), and every name its body loads that it does not bind itself (Python's
    rule: a name bound anywhere in a function is local to it). Over-approximate, never short."""
    outer: set[str] = set()
    for expr in [*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d is not None),
                 *(a.annotation for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                                          node.args.vararg, node.args.kwarg) if a is not None and a.annotation),
                 *([node.returns] if node.returns else [])]:
        outer |= _names(expr)[0]
    loads, stores = set(), set()
    for stmt in node.body:
        stmt_loads, stmt_stores = _names(stmt)
        loads |= stmt_loads
        stores |= stmt_stores
    params = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                              node.args.vararg, node.args.kwarg) if a is not None}
    return frozenset(outer | (loads - stores - params))


def _binds(stmt: ast.stmt) -> set[str]:
    """The module-level names a top-level statement binds or changes: assignment targets (the
    object of `X[i] = ...`, `X.a = ...` and of a bare method call `X.append(...)` too), the
    names of definitions and imports, and names declared `global` inside a definition."""
    out: set[str] = set()
    todo: list[ast.AST] = [stmt]
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            out.update(name for g in ast.walk(n) if isinstance(g, ast.Global) for name in g.names)
            todo.extend(n.decorator_list)
            continue
        if isinstance(n, ast.Lambda):
            continue
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
            continue
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            out.add(n.id)
        elif isinstance(n, (ast.Attribute, ast.Subscript)) and not isinstance(n.ctx, ast.Load):
            base = _base_name(n)
            if base:
                out.add(base)
        elif isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute):
            base = _base_name(n.value.func.value)
            if base:
                out.add(base)
        todo.extend(ast.iter_child_nodes(n))
    return out


def _base_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _imports(stmt: ast.stmt) -> bool:
    """Whether the statement imports at module level (also inside `try`/`if`, as ImportMap reads)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(stmt, (ast.If, ast.Try)) or type(stmt).__name__ == "TryStar":
        bodies = [stmt.body, getattr(stmt, "orelse", [])]
        if not isinstance(stmt, ast.If):
            bodies += [h.body for h in stmt.handlers] + [stmt.finalbody]
        return any(_imports(s) for body in bodies for s in body)
    return False


def _statement_reads(stmt: ast.stmt) -> frozenset[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return function_reads(stmt)
    return frozenset(_names(stmt)[0])


def _first_line(node: ast.stmt) -> int:
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])


def layout_of(source: SourceFile, workspace=None, kernels: list[Kernel] | None = None,
              known: dict | None = None) -> Layout | None:
    """The layout of a parsed source (`kernels`: its kernels, when the caller found them
    already; `known`: text -> (reads, binds, imports) of pieces seen before), or None when it
    does not parse."""
    if source.tree is None:
        return None
    lines = split_lines(source.text)
    if kernels is None:
        try:
            kernels = find_kernels(source.tree, ImportMap(source.tree, workspace=workspace, path=source.path))
        except RecursionError:
            return None
    known = {} if known is None else known
    kernel_nodes = {id(k.node): k for k in kernels}
    segments, statements = [], []
    try:
        for node in source.tree.body:
            first, last = _first_line(node), node.end_lineno or node.lineno
            text = "\n".join(lines[first - 1:last])
            kernel = kernel_nodes.get(id(node))
            facts = known.get(("k" if kernel else "s", text))
            if facts is None:
                if kernel is not None:
                    facts = (function_reads(node), frozenset(), False)
                else:
                    facts = (_statement_reads(node), frozenset(_binds(node)), _imports(node))
                known[("k" if kernel else "s", text)] = facts
            if kernel is not None:
                segments.append(Segment(kernel.name, first, last, text, facts[0]))
            else:
                statements.append(Statement(first, last, text, *facts))
    except RecursionError:
        return None
    return Layout(lines, segments, statements)


@dataclass
class Previous:
    """What the last lint of a file left to reuse."""

    layout: Layout
    settings: Settings
    findings: list[Finding]
    known: dict | None = None   # text -> (reads, binds, imports): layout_of's memory
    exact: bool = True          # the findings are those of a full lint


@dataclass
class IncrementalResult:
    result: FileResult
    exact: bool                        # False: some findings were carried over (see the module doc)
    relinted: tuple[str, ...] = ()     # the kernels linted again (empty for a full lint)
    statements: int = 0                # outside statements whose findings were linted again
    full_because: str = ""             # a full lint: why the edit could not be followed


def _helpers(segment: Segment, by_name: dict[str, Segment]) -> set[str]:
    """The other kernels `segment` names, transitively."""
    seen: set[str] = set()
    todo = [segment]
    while todo:
        s = todo.pop()
        for word in set(_WORD.findall(s.text)):
            if word in by_name and word not in seen and word != segment.name:
                seen.add(word)
                todo.append(by_name[word])
    return seen


_LINE_REF = re.compile(r"\bline (\d+)\b")   # a message naming another line: "feeds `tl.dot` (line 42)"


def _moved(finding: Finding, mapping: dict[int, int]) -> Finding | None:
    """`finding` with its lines (its fixes' lines, and the lines its message names) moved, or
    None when one is not kept."""
    try:
        edits = [[replace(e, start_line=mapping[e.start_line], end_line=mapping[e.end_line]) for e in fix.edits]
                 for fix in finding.fixes]
        message = finding.message
        if "line " in message:
            message = _LINE_REF.sub(lambda m: f"line {mapping[int(m.group(1))]}", message)
        moved = replace(finding, line=mapping[finding.line], end_line=mapping[finding.end_line], message=message)
    except KeyError:
        return None
    moved.fixes = [replace(fix, edits=tuple(e)) for fix, e in zip(finding.fixes, edits)]
    return moved


def reduced_text(layout: Layout, keep: set[str]) -> str:
    """The file's text with the lines of every kernel not in `keep` left blank."""
    lines = list(layout.lines)
    for s in layout.segments:
        if s.name not in keep:
            for n in range(s.first - 1, s.last):
                lines[n] = ""
    return "\n".join(lines) + "\n"


@dataclass
class ReducedSource(SourceFile):
    """`reduced_text` as a parsed source, with what the dead-code check (PythonContext's
    `_whole_module`) reads of the kernels it leaves blank: those kernels (the file's `Kernel`s) and
    (line, name) of every reference in them (`unlaunched.references`), found when first asked for
    (a lint that reports no compile break and no print does not ask) and kept by the kernel's text
    in `known` (layout_of's memory) for the next key."""

    left_out_kernels: tuple = ()
    left_out: tuple = field(default=(), repr=False, compare=False)   # (segment, node) of each kernel blanked
    known: dict = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def left_out_references(self) -> tuple[tuple[int, str], ...]:
        refs = []
        for seg, node in self.left_out:
            found = self.known.get(("r", seg.text))
            if found is None:   # lines from the segment's first: the same text, the same references
                found = self.known[("r", seg.text)] = tuple((line - seg.first, name) for line, name in references(node))
            refs.extend((seg.first + offset, name) for offset, name in found)
        return tuple(refs)


def _reduced_source(source: SourceFile, layout: Layout, keep: set[str], kernels: list[Kernel] | None,
                    known: dict, workspace=None) -> ReducedSource:
    """`reduced_text` as a parsed source, its tree the file's own without the blanked kernels
    (`kernels`: the file's, None to find them; `known`: layout_of's memory)."""
    blanked = {s.first: s for s in layout.segments if s.name not in keep}
    body, left_out = [], []
    for node in source.tree.body:
        seg = blanked.get(_first_line(node))
        if seg is None:
            body.append(node)
        else:
            left_out.append((seg, node))
    left_kernels = ()
    if blanked:
        if kernels is None:
            kernels = find_kernels(source.tree, ImportMap(source.tree, workspace=workspace, path=source.path))
        left_kernels = tuple(k for k in kernels if any(s.first <= k.node.lineno <= s.last for s in blanked.values()))
    return ReducedSource(text=reduced_text(layout, keep), path=source.path, tree=ast.Module(body=body, type_ignores=[]),
                         left_out_kernels=left_kernels, left_out=tuple(left_out), known=known)


def lint_incremental(source: SourceFile, settings: Settings, workspace=None, previous: Previous | None = None,
                     kernels: list[Kernel] | None = None,
                     statements_first: Callable[[FileResult], None] | None = None,
                     ) -> tuple[IncrementalResult, Previous | None]:
    """Lint `source`, re-linting only what changed since `previous` (and what depends on it)
    when that is possible. Returns the result and what the next call may reuse (`previous`
    itself when `source` does not parse, so that typing through half a statement keeps the base).
    `statements_first`: when something is linted again, called first with the first answer
    (`_first_answer`: the statement-scope findings of what was linted again, the others carried
    over); not called for a full lint or an edit that needs no lint."""
    known = dict(previous.known or {}) if previous is not None else {}
    layout = layout_of(source, workspace, kernels, known)
    reused: IncrementalResult | str = "no earlier lint to build on" if previous is None else "it does not parse"
    if layout is not None and previous is not None:
        reused = _relint_changed(source, layout, settings, workspace, previous, known, statements_first, kernels)
    if layout is not None:   # forget what no piece of this text is any more
        keys = {(kind, s.text) for s in layout.segments for kind in "kr"} | {
            (kind, s.text) for s in layout.statements for kind in "si"}
        known = {k: v for k, v in known.items() if k in keys}
        if isinstance(reused, IncrementalResult):
            return reused, Previous(layout, settings, reused.result.findings, known, reused.exact)
    result = lint_source(source, settings, workspace, kernels=kernels)
    if layout is None:   # a syntax error (half a statement typed): the last base stays the one to reuse
        return IncrementalResult(result, exact=True, full_because=reused), previous
    return IncrementalResult(result, exact=True, full_because=reused), Previous(layout, settings, result.findings, known)


def _absolute(statements: list[Statement], known: dict, layout: Layout | None = None,
              nodes: dict[int, ast.stmt] | None = None) -> list[tuple[int, "_Item"]] | None:
    """The items of `statements`, each with its statement's first line (`known` keeps them by
    text; `layout` and `nodes`, first line -> top-level node: the parsed text they are in)."""
    out = []
    for s in statements:
        items = known.get(("i", s.text), False)
        if items is False:
            node = nodes.get(s.first) if nodes is not None else None
            items = known[("i", s.text)] = (statement_items(s.text) if node is None
                                            else _items_of(node, layout.lines, s.first))
        if items is None:
            return None
        out.extend((s.first, it) for it in items)
    return out


def _matched_statements(old: list[Statement], new: list[Statement]) -> dict[int, int]:
    """Index in `old` -> index in `new` of the statements kept as they were (same text, same order)."""
    matcher = SequenceMatcher(None, [s.text for s in old], [s.text for s in new], autojunk=False)
    pairs = {}
    for block in matcher.get_matching_blocks():
        for i in range(block.size):
            pairs[block.a + i] = block.b + i
    return pairs


def _line_map(old: Layout, new: Layout, kept_segments: list[tuple[Segment, Segment]],
              kept_statements: list[tuple[Statement, Statement]]) -> dict[int, int]:
    """Old line -> new line for every line kept as it was: the lines before and after the edited
    region, and the lines of each unchanged kernel and statement."""
    a, b = old.lines, new.lines
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    mapping = {n: n for n in range(1, prefix + 1)}
    shift = len(b) - len(a)
    mapping.update((n, n + shift) for n in range(len(a) - suffix + 1, len(a) + 1))
    for o, n in [*kept_segments, *kept_statements]:
        for line in range(o.first, o.last + 1):
            mapping[line] = line + n.first - o.first
    mapping[len(a) + 1] = len(b) + 1   # an insertion at the end of the file
    return mapping


def _relint_changed(source: SourceFile, layout: Layout, settings: Settings, workspace,
                    previous: Previous, known: dict,
                    statements_first: Callable[[FileResult], None] | None = None,
                    kernels: list[Kernel] | None = None) -> IncrementalResult | str:
    """The result of re-linting what the edit touched, or why the file must be linted in full."""
    old = previous.layout
    names_in_order = [s.name for s in layout.segments]
    if previous.settings != settings:
        return "other settings"
    if names_in_order != [s.name for s in old.segments] or len(set(names_in_order)) != len(names_in_order):
        return "a kernel added, removed or renamed"
    pairs = _matched_statements(old.statements, layout.statements)
    changed_old = [s for i, s in enumerate(old.statements) if i not in pairs]
    matched_new = set(pairs.values())
    changed_new = [s for i, s in enumerate(layout.statements) if i not in matched_new]
    imports = [s for s in (*changed_old, *changed_new) if s.imports]
    if imports:
        # an import edited: the names it binds (or bound) may mean something else now, for every
        # piece of the file that reads one; an import nothing reads (yet) is an ordinary statement
        bound = set().union(*(s.binds for s in imports))
        if "*" in bound or any(bound & p.reads for p in (*layout.segments, *layout.statements)):
            return "an import edited"
    segments = list(zip(old.segments, layout.segments))
    by_name = {s.name: s for s in layout.segments}
    kernel_names = set(by_name)

    # the names the edit changed, followed through the statements that read them
    names = set().union(*(s.binds for s in (*changed_old, *changed_new)))
    affected = {i for i in range(len(layout.statements)) if i not in matched_new}
    grew = bool(names)
    while grew:
        grew = False
        for i, s in enumerate(layout.statements):
            if i not in affected and s.reads & names:
                affected.add(i)
                if not s.binds <= names:
                    names |= s.binds
                    grew = True
    relint = {n.name for o, n in segments if o.text != n.text or n.reads & names}
    # the kernels whose launches the edit could have changed, among those the affected
    # statements name (and the lines of the other launches there, whose findings are kept)
    old_index = {v: k for k, v in pairs.items()}
    nodes = {_first_line(node): node for node in source.tree.body}
    groups = [(_absolute(changed_old, known), _absolute(changed_new, known, layout, nodes),
               set().union(*(s.reads for s in (*changed_old, *changed_new))) & kernel_names)]
    for i in sorted(affected & set(old_index)):
        s = layout.statements[i]
        if s.reads & kernel_names:
            groups.append((_absolute([old.statements[old_index[i]]], known), _absolute([s], known, layout, nodes),
                           s.reads & kernel_names))
    launched = _launches_changed(groups, names, relint)
    if launched is None:   # a statement's items could not be built: every kernel they name
        launched = _Launches(set().union(*(g[2] for g in groups)), set(), set(), {})
    relint |= launched.relint
    # the statements whose findings are linted again: those the edit affected (the launches of a
    # kernel whose body changed keep theirs until the full lint: keeping every kernel such a
    # launcher names in the reduced text would cost what a full lint costs)
    fresh = affected
    relinted_nothing = not relint and not fresh

    kept_segments = [(o, n) for o, n in segments if n.name not in relint]
    kept_statements = [(old.statements[old_index[i]], s) for i, s in enumerate(layout.statements)
                       if i not in fresh and i in old_index]
    mapping = _line_map(old, layout, kept_segments, kept_statements)
    for line, to in launched.mapping.items():
        mapping.setdefault(line, to)
    stale_lines: set[int] = set()   # old lines whose findings are replaced
    for o, n in segments:
        if n.name in relint:
            stale_lines.update(range(o.first, o.last + 1))
    for s in changed_old:
        stale_lines.update(range(s.first, s.last + 1))
    for i in fresh:
        if i in old_index:
            s = old.statements[old_index[i]]
            stale_lines.update(range(s.first, s.last + 1))
    findings: list[Finding] = []
    stale_lines -= launched.kept_old
    for f in previous.findings:
        if f.line in stale_lines:
            continue
        moved = _moved(f, mapping)
        if moved is None:
            return "a finding's line not kept"
        findings.append(moved)
    error = None
    if not relinted_nothing:
        keep = set(relint)
        words = {s.name: set(_WORD.findall(s.text)) for s in layout.segments}
        for name in relint:
            keep |= _helpers(by_name[name], by_name)
            keep |= {other for other, said in words.items() if name in said}   # its callers: a helper stays one
        wanted: set[int] = set()
        for name in relint:
            seg = by_name[name]
            wanted.update(range(seg.first, seg.last + 1))
        for i in fresh:
            s = layout.statements[i]
            wanted.update(range(s.first, s.last + 1))
        wanted -= launched.kept_new
        first = None
        if statements_first is not None:
            carried = list(findings)

            def first(early: FileResult) -> None:
                answer = _first_answer(source.path, carried, early, wanted, previous, stale_lines,
                                       {**_region_map(old, layout), **mapping})
                if answer is not None:
                    statements_first(answer)

        blank = [(seg.first, seg.last) for seg in layout.segments if seg.name not in keep]
        kept_kernels = None if kernels is None else [
            k for k in kernels if not any(a <= k.node.lineno <= b for a, b in blank)]
        linted = lint_source(_reduced_source(source, layout, keep, kernels, known, workspace), settings, workspace,
                             statements_first=first, kernels=kept_kernels)
        error = linted.error
        findings.extend(f for f in linted.findings if f.line in wanted)
    findings.sort(key=Finding.sort_key)
    return IncrementalResult(FileResult(source.path, findings, error=error), exact=relinted_nothing and previous.exact,
                             relinted=tuple(sorted(relint)), statements=len(fresh))


def _said(f: Finding) -> tuple:
    """What a finding shows: its code, where it is, its message."""
    return f.code, f.line, f.column, f.end_line, f.end_column, f.message


def _region_map(old: Layout, new: Layout) -> dict[int, int]:
    """Old line -> new line inside the one edited region, when it kept its number of lines (a
    statement edited within its lines): line for line. Empty otherwise."""
    a, b = old.lines, new.lines
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    if len(a) - suffix - prefix != len(b) - suffix - prefix:
        return {}
    return {n: n for n in range(prefix + 1, len(a) - suffix + 1)}


def _first_answer(path: str, carried: list[Finding], early: FileResult, wanted: set[int], previous: Previous,
                  stale_lines: set[int], mapping: dict[int, int]) -> FileResult | None:
    """The answer before the rules of kernel scope have run again: the findings of the rules of
    statement scope on the lines linted again (`early`, the same lint's first part: the same as
    the whole lint gives for them), and every other finding carried over, moved with its line:
    also those of the kernel-scope rules on the lines linted again, until the whole lint
    replaces them (one on a line the edit changed is left out when its line has no place).
    None when the statement-scope findings there are those of the last lint, moved: the first
    answer would say nothing new (an editor moves what it shows with the edit itself), and each
    answer costs the editor a redraw of the document's problems."""
    statement_codes = {r.code for r in all_rules() if r.rule.scope == STATEMENT_SCOPE}
    fresh = [f for f in early.findings if f.line in wanted and f.code in statement_codes]
    out, before = list(carried), []
    for f in previous.findings:
        if f.line in stale_lines:
            moved = _moved(f, mapping)
            if f.code not in statement_codes:
                if moved is not None:
                    out.append(moved)
            else:
                before.append(moved)
    if None not in before and sorted(map(_said, before)) == sorted(map(_said, fresh)):
        return None
    out.extend(fresh)
    out.sort(key=Finding.sort_key)
    return FileResult(path, out, error=early.error)


# ---- which launches an edit of the code outside the kernels changed ------------------------------

@dataclass(frozen=True)
class _Item:
    """One simple statement of a top-level statement (or the header of a compound one: `if t:`,
    `for x in xs:`, `def f(a=1):`), its lines relative to the statement's first line (0-based),
    its text, the names it reads and binds, and whether it is a guard (anything but an
    assignment or a launch: an `assert`, an `if` test, a call statement, whose reads can decide
    a finding)."""

    first: int
    last: int
    text: str
    loads: frozenset[str]
    binds: frozenset[str]
    guard: bool


_ASSIGNS = (ast.Assign, ast.AnnAssign, ast.AugAssign)
_BODIES = (ast.stmt, ast.ExceptHandler, ast.match_case)


def _is_launch(node: ast.AST) -> bool:
    """`f[grid](...)` as a statement: a launch, which guards no name it reads."""
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Subscript))


def statement_items(text: str) -> tuple[_Item, ...] | None:
    """The simple statements of one top-level statement's text, in order; None when the text
    does not parse on its own (a statement sharing a line with another through `;`)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    lines = text.split("\n")
    out: list[_Item] = []
    try:
        for node in tree.body:
            _flatten(node, lines, 1, out)
    except RecursionError:
        return None
    return tuple(out)


def _items_of(node: ast.stmt, lines: list[str], first: int) -> tuple[_Item, ...] | None:
    """`statement_items` of a node already parsed: `lines` the text it is in, `first` its first line."""
    out: list[_Item] = []
    try:
        _flatten(node, lines, first, out)
    except RecursionError:
        return None
    return tuple(out)


def _flatten(node: ast.AST, lines: list[str], base: int, out: list[_Item]) -> None:
    """Append the items of `node` to `out` (`base`: the line that is the statement's first)."""
    header: list[ast.AST] = []
    bodies: list[list[ast.AST]] = []
    for _, value in ast.iter_fields(node):
        if isinstance(value, list) and value and isinstance(value[0], _BODIES):
            bodies.append(value)
        elif isinstance(value, list):
            header.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            header.append(value)
    first = node.pattern.lineno if isinstance(node, ast.match_case) else _first_line(node)
    if not bodies:
        loads, stores = _names(node)
        binds = stores | (_binds(node) if isinstance(node, ast.stmt) else set())
        last = node.end_lineno or node.lineno
        out.append(_Item(first - base, last - base, "\n".join(lines[first - 1:last]), frozenset(loads),
                         frozenset(binds), not isinstance(node, _ASSIGNS) and not _is_launch(node)))
        return
    loads, binds = set(), set()
    for part in header:
        part_loads, part_stores = _names(part)
        loads |= part_loads
        binds |= part_stores
    name = getattr(node, "name", None)
    if isinstance(name, str):
        binds.add(name)
    last = max(first, min(body[0].lineno if not isinstance(body[0], ast.match_case) else body[0].pattern.lineno
                          for body in bodies) - 1)
    out.append(_Item(first - base, last - base, "\n".join(lines[first - 1:last]), frozenset(loads), frozenset(binds),
                     True))
    for body in bodies:
        for child in body:
            _flatten(child, lines, base, out)


@dataclass
class _Launches:
    """What an edit did to the launches in the statements it affected: the kernels whose launch
    could have changed, the old and new lines of the others' launches (whose findings are kept),
    and old line -> new line for every line of a statement kept as it was."""

    relint: set[str]
    kept_old: set[int]
    kept_new: set[int]
    mapping: dict[int, int]


def _slice(items: list[tuple[int, _Item]], kernel: str) -> tuple[set[str], set[str], list[int]]:
    """(aliases, names, launch items) of `kernel` among `items`: the names bound from it
    (`k = kernel`), the names its launches read and, through the assignments before them, what
    those are computed from (over-approximate: names, not scopes), and the indexes of the items
    that read it or an alias."""
    aliases = {kernel}
    grew = True
    while grew:
        grew = False
        for _, it in items:
            if it.loads & aliases and not it.binds <= aliases:
                aliases |= it.binds
                grew = True
    launch = [i for i, (_, it) in enumerate(items) if it.loads & aliases]
    names = set(aliases).union(*(items[i][1].loads for i in launch))
    grew = True
    while grew:
        grew = False
        for _, it in items:
            if it.binds & names and not it.loads <= names:
                names |= it.loads
                grew = True
    return aliases, names, launch


def _launches_changed(groups, changed_names: set[str], relint: set[str]) -> _Launches | None:
    """For each group (old items, new items, each a list of (absolute first line, item), or None
    when they could not be built; the kernels the group's statements name): which of those
    kernels' launches the edit could have changed. An item is touched when it is new, gone or
    edited, or reads a name the edit changed; a launch changed when a touched item binds a name
    it reads (directly or through the assignments it is computed from), reads the kernel, or
    guards (asserts, tests, calls) on such a name. `relint`: the kernels linted again anyway
    (their launches' findings are not kept). None when a group's items could not be built."""
    out = _Launches(set(), set(), set(), {})
    found = []
    for old, new, named in groups:
        if old is None or new is None:
            return None
        matcher = SequenceMatcher(None, [it.text for _, it in old], [it.text for _, it in new], autojunk=False)
        pairs = [(b.a + i, b.b + i) for b in matcher.get_matching_blocks() for i in range(b.size)]
        old_matched, new_matched = {a for a, _ in pairs}, {b for _, b in pairs}
        touched = [it for i, (_, it) in enumerate(old) if i not in old_matched]
        touched += [it for i, (_, it) in enumerate(new) if i not in new_matched or it.loads & changed_names]
        for kernel in named:
            old_aliases, old_names, old_launch = _slice(old, kernel)
            new_aliases, new_names, new_launch = _slice(new, kernel)
            aliases, names = old_aliases | new_aliases, old_names | new_names
            if any(t.binds & names or t.loads & aliases or (t.guard and t.loads & names) for t in touched):
                out.relint.add(kernel)
            found.append((old, new, kernel, aliases, old_launch, new_launch))
        for a, b in pairs:
            (old_first, it), (new_first, _) = old[a], new[b]
            for n in range(it.first, it.last + 1):
                out.mapping.setdefault(old_first + n, new_first + n)
    linted = out.relint | relint
    linted_aliases = set(linted).union(*(f[3] for f in found if f[2] in linted))
    for old, new, kernel, _, old_launch, new_launch in found:
        if kernel in linted:
            continue
        for items, launch, lines in ((old, old_launch, out.kept_old), (new, new_launch, out.kept_new)):
            for i in launch:
                first, it = items[i]
                if not it.loads & linted_aliases:
                    lines.update(range(first + it.first, first + it.last + 1))
    return out
