"""Whether a Python file can define a Triton kernel, decided from its text, before any parse.

Every kernel rule (`Rule.language == "triton"`) looks only inside kernels, so a file that cannot
define one gets nothing from them, and the engine need not parse it at all when no other
selected rule wants it either (torch's `sparse/_triton_ops_meta.py`, 7,783 lines of tuning
tables, takes 165 ms to parse and holds no kernel). The test must never say "no kernel" where
`find_kernels` would find one, so it follows how a kernel is recognised: a function under a
decorator, or passed as the first argument of a call (`k = jit(f)`), whose callee resolves to
`triton.jit` through `ImportMap`.

1. A text that spells `jit` anywhere, or has no `def`, is decided at once (parsed / not).
2. Otherwise every candidate callee is listed from the text: the dotted name after each `@` at
   the start of a line, and the dotted name before each `(` that a function defined in the file
   follows. None: no kernel.
3. The callee's first name decides. Not bound by any import of the file (a builtin, a local
   function): no kernel through it. Assigned a dotted name (`k = compat.kernel`, an alias
   `ImportMap` follows): that name is a candidate too. A star import: parsed. Bound by an
   import: that import statement alone is parsed and resolved with the workspace index exactly
   as `ImportMap` does (`from .compat import kernel`, where `kernel = triton.jit`, is
   `triton.jit`; `compat.kernel` after `from . import compat` too). `triton.jit` under any
   name: parsed.

Anything the text test cannot read for certain (`@(`, `a(...)(...)(fn)`, the word `import`
outside an import statement's usual place, a statement that does not parse alone) says "parse".
Only the imports of candidate callees are resolved, so the modules a file imports for other
reasons are not read for the screen.
"""
from __future__ import annotations

import ast
import re
import warnings

from tritonify.diagnostics.triton_ast import ImportMap, canonical

# What `find_kernels` takes for jit (after `canonical`): see triton_ast._jit_like.
_JIT_PATHS = frozenset({"triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit"})
_IMPORT_WORD = re.compile(r"\bimport\b")
_STATEMENT_HEAD = re.compile(r"[ \t\f]*(?:from[ \t]+[.\w]+[ \t]+)?import\b")
_DECORATOR_LINE = re.compile(r"^[ \t\f]*@(.*)$", re.MULTILINE)
_DEF_NAME = re.compile(r"\bdef[ \t]+(\w+)")
_DOTTED_PREFIX = re.compile(r"[A-Za-z_][\w \t]*(?:\.[ \t]*[A-Za-z_]\w*[ \t]*)*")
_GAP = r"(?:\s|\\\n|#[^\n]*\n)*"   # what may stand between tokens: blanks, continuations, comments
# every `(` and the word after it (a lookahead, so each `(` is tried), and every `name = value`
# line: static patterns, compiled once, whose words are then looked up in the file's names
_CALL_ARGUMENT = re.compile(rf"\((?={_GAP}(\w+))")
_ASSIGNMENT = re.compile(r"^[ \t\f]*(\w+)[ \t]*=(?!=)(.*)$", re.MULTILINE)


class _Parse(Exception):
    """The text cannot be read for certain: parse the file."""


def may_define_kernel(text: str, path: str | None = None, workspace=None) -> bool:
    """False only when the file certainly defines no Triton kernel (see the module docstring).
    `workspace`: the `WorkspaceIndex` that resolves the file's imports (None: guesses only, as
    `ImportMap` does for a file with nothing on disk behind it)."""
    if "jit" in text:
        return True
    if "def" not in text:
        return False
    if "\r" in text:   # Python's other line breaks: the patterns below read lines at "\n"
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        callees = _candidate_callees(text)
        if not callees:
            return False
        for _ in range(8):   # aliases of aliases: `a = compat.tools`, `k = a.kernel`
            heads = {c.split(".")[0] for c in callees}
            more = _aliases(text, heads) - callees
            if not more:
                break
            callees |= more
        else:
            return True
        statements = _imports_binding(text, {c.split(".")[0] for c in callees})
    except _Parse:
        return True
    for stmt in statements:
        imports = ImportMap(ast.Module(body=[stmt], type_ignores=[]), workspace=workspace, path=path)
        for callee in callees:
            if callee.split(".")[0] in imports.names:
                resolved = imports.resolve(ast.parse(callee, mode="eval").body)
                if resolved is not None and canonical(resolved) in _JIT_PATHS:
                    return True
    return False


def _candidate_callees(text: str) -> set[str]:
    """Dotted names that could make a kernel: decorators, and callees given a function of the file."""
    found: set[str] = set()
    for m in _DECORATOR_LINE.finditer(text):
        expr = m.group(1).strip()
        prefix = _DOTTED_PREFIX.match(expr)
        if prefix is None:
            raise _Parse   # `@(` ... or `@\`: the decorator goes on over the next lines
        found.add(_squeeze(prefix.group()))
    functions = set(_DEF_NAME.findall(text))
    if functions:
        taken = 0   # where the last call taken ends: one inside the gap it crossed is not another
        for m in _CALL_ARGUMENT.finditer(text):   # `callee(fn` with `def fn` in the file
            if m.start() < taken or m.group(1) not in functions:
                continue
            taken = m.end(1)
            before = text[max(0, m.start() - 2000):m.start()].replace("\\\n", " ").rstrip()
            if before.endswith(")"):
                before = _before_call(before)   # `factory(...)(fn)`: `_jit_like` resolves `factory`
            found.add(_dotted_before(before))   # none after `]`: a subscript is never resolved
    return {c for c in found if c}


def _dotted_before(text: str) -> str:
    """The dotted name that ends `text` (`compat.kernel` of `k = compat . kernel`), read
    backwards from its end (a regex anchored at the end would try every start: quadratic)."""
    i = len(text)
    parts: list[str] = []
    while True:
        j = i
        while j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
            j -= 1
        word = text[j:i]
        if not word or not (word[0].isalpha() or word[0] == "_"):
            break
        parts.append(word)
        k = j
        while k > 0 and text[k - 1] in " \t\r\n\\":
            k -= 1
        if k == 0 or text[k - 1] != ".":
            break
        k -= 1
        while k > 0 and text[k - 1] in " \t\r\n\\":
            k -= 1
        i = k
    return ".".join(reversed(parts))


def _before_call(before: str) -> str:
    """The text before the call whose closing bracket ends `before` (`factory` of `factory(...)`)."""
    depth = 0
    for i in range(len(before) - 1, -1, -1):
        ch = before[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                if any(q in before[i:] for q in "\"'#"):
                    raise _Parse   # a bracket inside a string or comment could mislead the count
                head = before[:i].rstrip()
                if head.endswith(")"):
                    raise _Parse   # `a(...)(...)(fn)`
                return head
    raise _Parse


def _aliases(text: str, heads: set[str]) -> set[str]:
    """Dotted names assigned to `heads` (`k = compat.kernel`: ImportMap resolves such a
    module-level alias like an import). A value that is not plainly a dotted name cannot be
    such an alias, except `functools.partial(...)` and values over several lines: parse."""
    out: set[str] = set()
    if not heads:
        return out
    for m in _ASSIGNMENT.finditer(text):
        if m.group(1) not in heads:
            continue
        value = m.group(2).split("#")[0].strip()
        if not value or value[0] in "(\\":
            raise _Parse
        prefix = _DOTTED_PREFIX.match(value)
        if prefix is None:
            continue   # a literal, a list, a string: never an alias
        if prefix.end() == len(value.rstrip()):
            out.add(_squeeze(value))
        elif _squeeze(prefix.group()).rsplit(".", 1)[-1] == "partial":
            raise _Parse
    return out


def _squeeze(dotted: str) -> str:
    return "".join(dotted.split())


def _imports_binding(text: str, heads: set[str]) -> list[ast.stmt]:
    """The import statements of the file that bind one of `heads` (each parsed alone)."""
    out: list[ast.stmt] = []
    for m in _IMPORT_WORD.finditer(text):
        for node in _import_statement(text, m.start()):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for alias in node.names:
                if alias.name == "*":
                    raise _Parse   # binds names that only the exporting module lists
                local = alias.asname or (alias.name.split(".")[0] if isinstance(node, ast.Import) else alias.name)
                if local in heads:
                    out.append(node)
                    break
    return out


def _import_statement(text: str, at: int) -> list[ast.stmt]:
    """The statement(s) of the logical line whose `import` word starts at `at`, parsed alone."""
    start = text.rfind("\n", 0, at) + 1
    head = _STATEMENT_HEAD.match(text, start)
    if head is None or head.end() != at + len("import"):
        raise _Parse   # the word in a comment, a string, after `try:` or `;`
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    if "(" in text[at:end]:
        close = text.find(")", at)
        if close < 0:
            raise _Parse
        end = text.find("\n", close)
        end = len(text) if end < 0 else end
    else:
        while text[start:end].rstrip().endswith("\\") and end < len(text):
            nxt = text.find("\n", end + 1)
            end = len(text) if nxt < 0 else nxt
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text[start:end].strip()).body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise _Parse from None
