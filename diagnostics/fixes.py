"""Apply fixes to text, the one fix-until-stable loop, and the edits fixes commonly need (imports).

Edits are computed and applied on one line model, `ast`'s (`source.LINE_BREAK`), and keep the
file's line endings; no fix is accepted whose result does not parse."""
from __future__ import annotations

import ast
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Generator, Iterable

from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix
from tritonify.diagnostics.source import LINE_BREAK, SourceFile, newline_of


MAX_FIX_PASSES = 10


def _span(source: SourceFile, edit: Edit) -> tuple[int, int]:
    a = source.offset(edit.start_line, edit.start_column)
    b = source.offset(edit.end_line, edit.end_column)
    return a, max(a, b)


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    if a[0] == a[1] or b[0] == b[1]:  # an insertion collides only strictly inside the other span
        return b[0] < a[0] < b[1] or a[0] < b[0] < a[1] or (a == b)
    return a[0] < b[1] and b[0] < a[1]


def _splice(text: str, spans: list[tuple[int, int, str]]) -> str:
    """Replace non-overlapping (start, end, new text) spans, in one pass over the text."""
    out, last = [], 0
    for a, b, t in sorted(spans, key=lambda s: (s[0], s[1])):
        out.append(text[last:a])
        out.append(t)
        last = b
    out.append(text[last:])
    return "".join(out)


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (one that overlaps an earlier one is skipped).

    Positions follow `ast`'s line model (`source.LINE_BREAK`), and every line break in an
    edit's new text is written as the file writes its own (`source.newline_of`)."""
    source = SourceFile(text=text)
    newline = newline_of(text)
    spans = sorted(((*_span(source, e), e.new_text) for e in edits), key=lambda s: (s[0], s[1]))
    kept, last_end = [], -1
    for a, b, t in spans:
        if a < last_end:
            continue  # overlaps the previous edit
        kept.append((a, b, LINE_BREAK.sub(newline, t) if newline != "\n" or "\r" in t else t))
        last_end = max(b, a)
    return _splice(text, kept)


def _safe_fix(finding: Finding, safe_only: bool) -> Fix | None:
    fix = finding.fix
    if fix is None or (safe_only and fix.applicability != Applicability.SAFE):
        return None
    return fix


def choose_fixes(text: str, findings: Iterable[Finding], safe_only: bool) -> tuple[list[Finding], list[Edit]]:
    """The findings whose preferred fix is applied in this pass and the edits that do it: a fix
    whose edits overlap an earlier fix is left for the next pass (as ruff does)."""
    source = SourceFile(text=text)
    chosen, edits, taken = [], [], []
    for f in findings:
        fix = _safe_fix(f, safe_only)
        if fix is None:
            continue
        new = [e for e in fix.edits if e not in edits]  # the same import twice is one edit
        spans = [_span(source, e) for e in new]
        if any(_overlaps(s, t) for s in spans for t in taken):
            continue
        chosen.append(f)
        edits.extend(new)
        taken.extend(spans)
    return chosen, edits


# ---- the fix-until-stable loop (the CLI's `check --fix` and the editor's fix-all) -------------

@dataclass
class FixOutcome:
    text: str                                              # the fixed text
    fixed: list[Finding] = field(default_factory=list)     # findings whose fix was applied
    skipped: list[tuple[Finding, str]] = field(default_factory=list)  # fixes refused, and why
    findings: list[Finding] | None = None                  # the fixed text's findings, when known

    @property
    def count(self) -> int:
        return len(self.fixed)


def parse_problem(text: str, language: str = "python") -> str | None:
    """Why `text` does not parse (None when it does). CUDA text is parsed with tree-sitter,
    which always gives a tree: there a problem is a syntax error node."""
    if language == "cuda":
        try:
            from tritonify.diagnostics.cuda.parser import parse
        except ImportError:  # pragma: no cover - core dependency
            return None
        return "a syntax error" if parse(text.encode("utf-8", "surrogatepass")).root_node.has_error else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg} at line {exc.lineno}"
    except (ValueError, MemoryError, RecursionError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _fix_key(source: SourceFile, finding: Finding) -> tuple:
    """What a fix does, independent of where the text has moved to: the rule, the text it
    replaces and the text it writes."""
    return (finding.code, *((source.text[slice(*_span(source, e))], e.new_text) for e in finding.fix.edits))


def fix_steps(text: str, findings: list[Finding], *, language: str = "python",
              passes: int = MAX_FIX_PASSES) -> Generator[str, list[Finding], FixOutcome]:
    """Apply safe fixes until none is left: the one fix loop, for any caller.

    A generator so that the caller lints the way it lints (the CLI in process, the server in
    its worker): it yields each new text and is sent that text's findings; it returns a
    `FixOutcome`. Every pass is parsed before it is accepted: a fix whose result would not
    parse is refused and reported (in `skipped`), never written. A fix that does not remove its
    finding (the next lint finds as many of it as before) is not applied again, so no rule can
    make the loop write the same text over and over; and the loop stops when a pass would bring
    back a text seen before."""
    outcome = FixOutcome(text, findings=findings)
    broken_before = parse_problem(text, language) is not None
    refused: set[tuple] = set()
    left: dict[tuple, int] = {}   # fix -> how many of its findings the next lint should still have
    seen = {text}
    for _ in range(passes):
        if outcome.findings is None:  # the text changed: lint it again
            findings = yield text
            outcome.findings = findings
        source = SourceFile(text=text)
        candidates = []
        for f in findings:
            if _safe_fix(f, True) is not None:
                candidates.append((f, _fix_key(source, f)))
        counts = Counter(key for _, key in candidates)
        for key, n in counts.items():
            if key in left and n > left[key] and key not in refused:
                refused.add(key)
                stuck = next(f for f, k in candidates if k == key)
                outcome.skipped.append((stuck, "applied once, but its fix does not remove the finding"))
        candidates = [(f, key) for f, key in candidates if key not in refused]
        chosen, edits = choose_fixes(text, [f for f, _ in candidates], True)
        if not chosen:
            break
        keys = {id(f): k for f, k in candidates}
        new = apply_edits(text, edits)
        problem = None if broken_before else parse_problem(new, language)
        if problem is not None:
            # find the fixes that break the text on their own; the others are tried together
            good = []
            for f in chosen:
                alone = parse_problem(apply_edits(text, f.fix.edits), language)
                if alone is None:
                    good.append(f)
                else:
                    refused.add(keys[id(f)])
                    outcome.skipped.append((f, f"the result would not parse ({alone})"))
            chosen, edits = choose_fixes(text, good, True)
            new = apply_edits(text, edits)
            problem = parse_problem(new, language) if chosen else None
            if problem is not None:
                for f in chosen:
                    refused.add(keys[id(f)])
                    outcome.skipped.append((f, f"together with the other fixes the result would not parse ({problem})"))
                continue
            if not chosen:
                continue
        if new in seen:
            break  # a fix that undoes another
        seen.add(new)
        applied = Counter(keys[id(f)] for f in chosen)
        left = {key: counts[key] - n for key, n in applied.items()}
        outcome.fixed.extend(chosen)
        outcome.findings = None
        text = new
    outcome.text = text
    return outcome


def fix_until_stable(text: str, findings: list[Finding], lint: Callable[[str], list[Finding]], *,
                     language: str = "python", passes: int = MAX_FIX_PASSES) -> FixOutcome:
    """`fix_steps` driven by a synchronous `lint(text) -> findings`."""
    steps = fix_steps(text, findings, language=language, passes=passes)
    try:
        request = next(steps)
        while True:
            request = steps.send(lint(request))
    except StopIteration as stop:
        return stop.value


async def fix_until_stable_async(text: str, findings: list[Finding], lint: Callable[[str], Awaitable[list[Finding]]], *,
                                 language: str = "python", passes: int = MAX_FIX_PASSES) -> FixOutcome:
    """`fix_steps` driven by an asynchronous `lint(text) -> findings` (the language server)."""
    steps = fix_steps(text, findings, language=language, passes=passes)
    try:
        request = next(steps)
        while True:
            request = steps.send(await lint(request))
    except StopIteration as stop:
        return stop.value


def import_edit(source: SourceFile, module: str, name: str | None = None, asname: str | None = None) -> Edit | None:
    """An edit that adds `from module import name` (or `import module`) unless the file already
    has it. Placed after the last top-level import (or after the docstring)."""
    tree = source.tree
    if tree is None:
        return None
    insert_after = 0
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.ImportFrom) and stmt.module == module and name:
            for alias in stmt.names:
                if alias.name == name and (alias.asname or None) == asname:
                    return None
        if isinstance(stmt, ast.Import) and not name:
            for alias in stmt.names:
                if alias.name == module and (alias.asname or None) == asname:
                    return None
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            insert_after = stmt.end_lineno or stmt.lineno
        elif i == 0 and isinstance(stmt, ast.Expr) and isinstance(getattr(stmt, "value", None), ast.Constant) and isinstance(stmt.value.value, str):
            insert_after = stmt.end_lineno or stmt.lineno
        elif isinstance(stmt, ast.Expr) or not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if insert_after or i > 0:
                break
    alias = f" as {asname}" if asname else ""
    line = f"from {module} import {name}{alias}\n" if name else f"import {module}{alias}\n"
    return Edit.insert(insert_after + 1, 0, line)
