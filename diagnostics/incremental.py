"""Lint an edited file again by re-linting only the kernels the edit touched.

A Python file is cut into segments: each top-level `@triton.jit` function (with its
decorators) is one, and everything else (imports, constants, launchers, classes) is the
outside. When a new text keeps the outside lines as they were and only kernel bodies changed,
each changed kernel is linted in a reduced text: the outside, that kernel, and the kernels it
names (its helpers, transitively), with every other kernel's lines left blank so that line
numbers stay those of the file. Its findings replace the kernel's old ones; the findings of
unchanged kernels and of the outside are carried over, moved with their lines.

Such a result is `exact=False`: a finding outside a kernel that depends on a kernel's body (a
launch checked against the kernel it launches) or a helper's finding that depends on its
callers is the one of the last full lint until the next full lint (the language server runs
one once typing pauses). Any change the segments cannot follow (the outside edited, a kernel
added, removed or renamed, a syntax error, other settings) is linted in full.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from tritonify.diagnostics.engine import FileResult, lint_source
from tritonify.diagnostics.model import Finding
from tritonify.diagnostics.settings import Settings
from tritonify.diagnostics.source import SourceFile, split_lines
from tritonify.diagnostics.triton_ast import ImportMap, Kernel, find_kernels

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Segment:
    """One top-level kernel: its name, first line (decorators included) and last line (1-based)."""

    name: str
    first: int
    last: int
    text: str


@dataclass
class Layout:
    """Where the kernels of one text are, and the lines outside them."""

    lines: list[str]
    segments: list[Segment]
    outside: tuple[str, ...]          # the text of every line outside the kernels, in order
    outside_lines: list[int]          # their line numbers (1-based)


def layout_of(source: SourceFile, workspace=None, kernels: list[Kernel] | None = None) -> Layout | None:
    """The layout of a parsed source (`kernels`: its kernels, when the caller found them
    already), or None when it does not parse."""
    if source.tree is None:
        return None
    lines = split_lines(source.text)
    if kernels is None:
        try:
            kernels = find_kernels(source.tree, ImportMap(source.tree, workspace=workspace, path=source.path))
        except RecursionError:
            return None
    top = {id(node) for node in source.tree.body}
    segments = []
    for k in kernels:
        if id(k.node) not in top:
            continue
        first = min([k.node.lineno, *(d.lineno for d in k.node.decorator_list)])
        last = k.node.end_lineno or k.node.lineno
        segments.append(Segment(k.name, first, last, "\n".join(lines[first - 1:last])))
    segments.sort(key=lambda s: s.first)
    inside = set()
    for s in segments:
        inside.update(range(s.first, s.last + 1))
    outside_lines = [n for n in range(1, len(lines) + 1) if n not in inside]
    return Layout(lines, segments, tuple(lines[n - 1] for n in outside_lines), outside_lines)


@dataclass
class Previous:
    """What the last lint of a file left to reuse."""

    layout: Layout
    settings: Settings
    findings: list[Finding]


@dataclass
class IncrementalResult:
    result: FileResult
    exact: bool                        # False: some findings were carried over (see the module doc)
    relinted: tuple[str, ...] = ()     # the kernels linted again (empty for a full lint)


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


def _line_map(old: Layout, new: Layout, changed: set[str]) -> dict[int, int]:
    """Old line -> new line for every line kept as it was (outside lines, unchanged kernels)."""
    mapping = dict(zip(old.outside_lines, new.outside_lines))
    new_by_name = {s.name: s for s in new.segments}
    for s in old.segments:
        if s.name in changed:
            continue
        shift = new_by_name[s.name].first - s.first
        for n in range(s.first, s.last + 1):
            mapping[n] = n + shift
    mapping[len(old.lines) + 1] = len(new.lines) + 1   # an insertion at the end of the file
    return mapping


def _moved(finding: Finding, mapping: dict[int, int]) -> Finding | None:
    """`finding` with its lines (and its fixes' lines) moved, or None when one is not kept."""
    try:
        edits = [[replace(e, start_line=mapping[e.start_line], end_line=mapping[e.end_line]) for e in fix.edits]
                 for fix in finding.fixes]
        moved = replace(finding, line=mapping[finding.line], end_line=mapping[finding.end_line])
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


def lint_incremental(source: SourceFile, settings: Settings, workspace=None, previous: Previous | None = None,
                     kernels: list[Kernel] | None = None) -> tuple[IncrementalResult, Previous | None]:
    """Lint `source`, re-linting only the kernels changed since `previous` when that is
    possible. Returns the result and what the next call may reuse (`previous` itself when
    `source` does not parse, so that typing through half a statement keeps the base)."""
    layout = layout_of(source, workspace, kernels)
    if layout is not None and previous is not None:
        reused = _relint_changed(source, layout, settings, workspace, previous)
        if reused is not None:
            return reused, Previous(layout, settings, reused.result.findings)
    result = lint_source(source, settings, workspace)
    if layout is None:   # a syntax error (half a statement typed): the last base stays the one to reuse
        return IncrementalResult(result, exact=True), previous
    return IncrementalResult(result, exact=True), Previous(layout, settings, result.findings)


def _relint_changed(source: SourceFile, layout: Layout, settings: Settings, workspace,
                    previous: Previous) -> IncrementalResult | None:
    old = previous.layout
    if (previous.settings != settings or layout.outside != old.outside
            or [s.name for s in layout.segments] != [s.name for s in old.segments]):
        return None
    changed = {s.name for s, o in zip(layout.segments, old.segments) if s.text != o.text}
    mapping = _line_map(old, layout, changed)
    old_by_line = {}
    for s in old.segments:
        for n in range(s.first, s.last + 1):
            old_by_line[n] = s.name
    findings: list[Finding] = []
    for f in previous.findings:
        if old_by_line.get(f.line) in changed:
            continue
        moved = _moved(f, mapping)
        if moved is None:
            return None
        findings.append(moved)
    by_name = {s.name: s for s in layout.segments}
    error = None
    for name in sorted(changed):
        seg = by_name[name]
        keep = {name} | _helpers(seg, by_name)
        part = SourceFile.from_text(reduced_text(layout, keep), source.path)
        if part.tree is None:
            return None
        linted = lint_source(part, settings, workspace)
        error = error or linted.error
        findings.extend(f for f in linted.findings if seg.first <= f.line <= seg.last)
    findings.sort(key=Finding.sort_key)
    return IncrementalResult(FileResult(source.path, findings, error=error), exact=not changed,
                             relinted=tuple(sorted(changed)))
