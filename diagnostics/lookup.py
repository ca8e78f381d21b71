"""What a position in a source file refers to, and which page of `references/` explains it.

The editor's hover calls this (the command line could too): a rule code written in the text
(`# noqa: TRI001`), or a Triton call (`tl.load`, `libdevice.tanh`, any import alias) that some
page of `references/` is about. Static only: the file is parsed, never imported.

A page is about an API when it names it in inline code (`` `libdevice.tanh` ``) in its prose:
for rule pages, in the "What it detects" section; for other pages (guides, `api/` pages if
they are added), anywhere outside code blocks. A page under `references/api/` named after the
API (`triton.language.load.md`, `tl.load.md`) wins over mentions.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tritonify.diagnostics.registry import all_rules, get_rule
from tritonify.diagnostics.source import SourceFile
from tritonify.diagnostics.triton_ast import LIBDEVICE, TL, ImportMap, canonical, dotted
from tritonify.references import ROOT as REFERENCES, page_path

CODE_RE = re.compile(r"\b[A-Z]{3}[0-9]{3}\b")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_API_IN_CODE = re.compile(r"\b((?:triton\.language|tl|libdevice)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
_FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class Page:
    title: str
    path: Path
    text: str

    @property
    def url(self) -> str:
        return self.path.as_uri()


def page_summary(page: Page, limit: int = 600) -> str:
    """The page in short: the first paragraph of its first section (for a rule page, "What it
    detects"), cut at a sentence when longer than `limit`."""
    lines = page.text.splitlines()
    start = next((i + 1 for i, line in enumerate(lines) if line.startswith("## ")), 0)
    para: list[str] = []
    for line in lines[start:]:
        if not line.strip():
            if para:
                break
            continue
        if line.startswith(("#", "```")):
            break
        para.append(line.strip())
    text = " ".join(para)
    if len(text) > limit:
        cut = text.rfind(". ", 0, limit)
        text = text[: cut + 1] if cut > 0 else text[:limit].rsplit(" ", 1)[0] + " …"
    return text


def rule_code_at(line_text: str, column: int) -> str | None:
    """A registered rule code (e.g. TRI001) that the 0-based `column` of the line falls on."""
    for m in CODE_RE.finditer(line_text):
        if m.start() <= column <= m.end() and get_rule(m.group()) is not None:
            return m.group()
    return None


def rule_page(code: str) -> Page | None:
    """The page of a rule (by code or name: TRI001, libdevice-tanh), a bottleneck pattern (C) or a
    compile finding (CMP-K); None when there is none."""
    reg = get_rule(code)
    path = page_path(reg.code if reg else code)
    if path is None:
        return None
    title = f"{reg.code} {reg.rule.name}" if reg else path.stem
    return Page(title, path, path.read_text(encoding="utf-8"))


def _normalise_api(name: str) -> str | None:
    """`tl.load` / `triton.language.load` / `libdevice.tanh` / any libdevice path -> canonical."""
    name = name.rstrip(".(")
    if name.startswith("tl."):
        name = TL + name[2:]
    elif name.startswith("libdevice."):
        name = LIBDEVICE + name[len("libdevice"):]
    name = canonical(name)
    if name.startswith(TL + ".") and name.count(".") >= 2:
        return name
    return None


def _mentions(markdown: str, *, rule_page: bool) -> set[str]:
    if rule_page:
        m = re.search(r"^## What it detects\s*$(.*?)(?=^## |\Z)", markdown, re.DOTALL | re.MULTILINE)
        markdown = m.group(1) if m else ""
    prose = _FENCE.sub("", markdown)
    found = set()
    for code in _INLINE_CODE.findall(prose):
        for api in _API_IN_CODE.findall(code):
            norm = _normalise_api(api)
            if norm:
                found.add(norm)
    return found


@lru_cache(maxsize=1)
def _api_index() -> dict[str, tuple[Path, ...]]:
    """canonical API path -> pages about it, dedicated `api/` pages first, then rules by code."""
    refs = REFERENCES
    index: dict[str, list[Path]] = {}
    api_dir = refs / "api"
    if api_dir.is_dir():
        for page in sorted(api_dir.glob("*.md")):
            norm = _normalise_api(page.stem)
            if norm:
                index.setdefault(norm, []).append(page)
    rule_pages = [r.rule.page for r in all_rules() if r.rule.page.is_file()]
    others = sorted(p for p in refs.rglob("*.md") if p not in rule_pages and p.parent != api_dir)
    for page, is_rule in [*((p, True) for p in rule_pages), *((p, False) for p in others)]:
        try:
            text = page.read_text(encoding="utf-8")
        except OSError:
            continue
        for api in _mentions(text, rule_page=is_rule):
            if page not in index.setdefault(api, []):
                index[api].append(page)
    return {k: tuple(v) for k, v in index.items()}


def pages_for_api(api: str) -> list[Page]:
    """Pages of `references/` about the canonical API path `api` (best first)."""
    out = []
    for path in _api_index().get(api, ()):
        try:
            out.append(Page(_title(path), path, path.read_text(encoding="utf-8")))
        except OSError:
            continue
    return out


def _title(path: Path) -> str:
    try:
        first = path.read_text(encoding="utf-8").splitlines()[0]
    except (OSError, IndexError):
        return path.stem
    return first.lstrip("# ").strip() or path.stem


def api_at(source: SourceFile, line: int, column: int) -> str | None:
    """Canonical path of the Triton name chain under a 1-based line / 0-based code-point
    column (`tl.load` under either word gives `triton.language.load`), or None."""
    if source.tree is None:
        return None
    best: ast.AST | None = None
    nodes = (n for stmt in _statements_at(source.tree.body, line) for n in ast.walk(stmt))
    for node in nodes:
        if not isinstance(node, (ast.Attribute, ast.Name)) or dotted(node) is None:
            continue
        start_line, start_col, end_line, end_col = source.node_range(node)
        if not (start_line <= line <= end_line):
            continue
        if (line == start_line and column < start_col) or (line == end_line and column > end_col):
            continue
        if best is None or _size(source, node) > _size(source, best):
            best = node  # the outermost chain: `tl.math.rsqrt`, not `tl.math`
    if best is None:
        return None
    path = ImportMap(source.tree).resolve(best)
    return path if path and path.startswith(TL + ".") else None


def _size(source: SourceFile, node: ast.AST) -> tuple[int, int]:
    line, col, end_line, end_col = source.node_range(node)
    return (end_line - line, end_col - col if end_line == line else end_col)


def _first_line(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])


def _statements_at(body: list[ast.stmt], line: int) -> list[ast.stmt]:
    """The statements of `body` whose lines hold `line` (only walks what contains it)."""
    return [s for s in body if _first_line(s) <= line <= (s.end_lineno or s.lineno)]


def enclosing_definitions(source: SourceFile, line: int) -> list[str]:
    """Names of the functions and classes whose lines (decorators included) hold 1-based
    `line`, outermost first; [] at module level or when the file does not parse."""
    if source.tree is None:
        return []
    names: list[str] = []
    body = source.tree.body
    while True:
        defs = [s for s in _statements_at(body, line)
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        if not defs:
            return names
        names.append(defs[0].name)
        body = defs[0].body


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def mentions_op(name: str, op: str) -> bool:
    """Whether an identifier names an op, ignoring case and underscores
    (`LlamaRMSNorm` and `_rms_norm_fwd` both name `rms_norm`)."""
    op = _squash(op)
    return bool(op) and op in _squash(name)
