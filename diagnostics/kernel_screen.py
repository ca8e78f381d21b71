"""Whether a Python file can define a Triton kernel, decided from its text, before any parse.

Every kernel rule (`Rule.language == "triton"`) looks only inside kernels, so a file that cannot
define one gets nothing from them, and the engine need not parse it at all when no other
selected rule wants it either (torch's `sparse/_triton_ops_meta.py`, 7,783 lines of tuning
tables, takes 165 ms to parse and holds no kernel). The test must never say "no kernel" where
`find_kernels` would find one, so it follows how a kernel is recognised: a function under a
decorator, or passed as the first argument of a call (`k = jit(f)`), whose callee resolves to
`triton.jit` through `ImportMap`.

1. A text with no `def` defines no kernel; one with `@jit` or `@triton.jit` opening a line is
   parsed at once. A text that spells `jit` otherwise (`torch.jit.script`, a code generator's
   `"@triton.jit"` in a string) goes through the steps below, where any candidate that is a bare
   `jit` (`_jit_like`'s "jit?") or reads `triton.jit` as written (ImportMap takes an unbound
   `triton.jit` as it is), and any alias of a `....jit(...)` factory, is a candidate for jit.
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
outside an import statement's usual place with a candidate's first name or `*` after it on its
logical line, a statement that does not parse alone) says "parse". The word elsewhere (in a
comment or a docstring, or a nested import of other names) binds none of them.
Only the imports of candidate callees are resolved, so the modules a file imports for other
reasons are not read for the screen.
"""
from __future__ import annotations

import ast
import keyword
import re
import warnings
from functools import lru_cache

from tritonify.diagnostics.triton_ast import ImportMap, canonical

# What `find_kernels` takes for jit (after `canonical`): see triton_ast._jit_like.
_JIT_PATHS = frozenset({"triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit"})
# Patterns that begin with a literal, so that `re` scans for it (a leading `\b` or `^` is tried at
# every position of the text: ten to twenty times slower); what the literal must start (a word,
# a line) is checked at each match
_IMPORT_WORD = re.compile(r"import\b")
_STATEMENT_HEAD = re.compile(r"[ \t\f]*(?:from[ \t]+[.\w]+[ \t]+)?import\b")
_AT = re.compile(r"@(.*)")
_DEF_NAME = re.compile(r"def[ \t]+(\w+)")
_WORD_CHAR = re.compile(r"\w")
_WORD_OR_STAR = re.compile(r"\w+|\*")
_LINE_INDENT = " \t\f"
# `@jit` or `@triton.jit` opening a line: a kernel file, nearly always (parsed at once)
_JIT_DECORATOR = re.compile(r"@[ \t\f]*(?:triton[ \t\f]*\.[ \t\f]*)?jit\b")
_DOTTED_PREFIX = re.compile(r"[A-Za-z_][\w \t]*(?:\.[ \t]*[A-Za-z_]\w*[ \t]*)*")
_GAP = r"(?:\s|\\\n|#[^\n]*\n)*"   # what may stand between tokens: blanks, continuations, comments
# every `(` and the word after it (a lookahead, so each `(` is tried): a static pattern, compiled
# once, whose words are then looked up in the file's names
_CALL_ARGUMENT = re.compile(rf"\((?={_GAP}(\w+))")


def _starts_word(text: str, at: int) -> bool:
    """No word character just before `at` (where `\b` would hold before a word)."""
    return at == 0 or _WORD_CHAR.match(text, at - 1) is None


def _opens_line(text: str, at: int) -> bool:
    """Only indentation before `at` on its line (where `^[ \t\f]*` would match before it)."""
    start = text.rfind("\n", 0, at) + 1
    return not text[start:at].strip(_LINE_INDENT)


class _Parse(Exception):
    """The text cannot be read for certain: parse the file."""


def may_define_kernel(text: str, path: str | None = None, workspace=None) -> bool:
    """False only when the file certainly defines no Triton kernel (see the module docstring).
    `workspace`: the `WorkspaceIndex` that resolves the file's imports (None: guesses only, as
    `ImportMap` does for a file with nothing on disk behind it)."""
    if "def" not in text:
        return False   # a kernel is a function definition
    if "\r" in text:   # Python's other line breaks: the patterns below read lines at "\n"
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    spells_jit = "jit" in text
    if spells_jit and any(_opens_line(text, m.start()) for m in _JIT_DECORATOR.finditer(text)):
        return True
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
        if spells_jit and any(c.split(".")[0] == "jit" or canonical(c) in _JIT_PATHS for c in callees):
            # `triton.jit` as written (ImportMap takes an unbound `triton.jit` as it is), or a
            # bare `jit` (`_jit_like`'s "jit?": a kernel when the module imports triton at all)
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
    for m in _AT.finditer(text):
        if not _opens_line(text, m.start()):
            continue   # `a @ b`, an address in a comment: not a decorator
        expr = m.group(1).strip()
        prefix = _DOTTED_PREFIX.match(expr)
        if prefix is None:
            raise _Parse   # `@(` ... or `@\`: the decorator goes on over the next lines
        found.add(_squeeze(prefix.group()))
    functions = {m.group(1) for m in _DEF_NAME.finditer(text) if _starts_word(text, m.start())}
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
    # `import (fn`, `if (fn`, `and (fn`: a keyword before the bracket is no callee
    return {c for c in found if c and not keyword.iskeyword(c.split(".")[0])}


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
    such an alias, except a bracketed one (`k = (\n compat.kernel\n)`), the first argument of
    `functools.partial(...)` and a `....jit(...)` factory (`alias_chain`); a value the text cannot
    read for certain (continued with a backslash, a name broken over lines): parse."""
    out: set[str] = set()
    if not heads:
        return out
    first, rest = _assignments_of(frozenset(heads))
    found = [(m.group(1), m.start(1)) for m in rest.finditer(text)]
    start = first.match(text)
    if start is not None:
        found.insert(0, (start.group(1), start.start(1)))
    for raw, at in found:
        value = raw.split("#")[0].strip()
        at += len(raw) - len(raw.lstrip())   # where `value` starts in the text
        if not value or value[0] == "\\":
            raise _Parse
        if value[0] == "(":
            name = _first_name(text, at + 1, ")")
            if name:
                out.add(name)
            continue
        prefix = _DOTTED_PREFIX.match(value)
        if prefix is None:
            continue   # a literal, a list, a string: never an alias
        if prefix.end() == len(value.rstrip()):
            out.add(_squeeze(value))
        else:
            last = _squeeze(prefix.group()).rsplit(".", 1)[-1]
            if last == "partial":   # `functools.partial(fn, ...)`: an alias of `fn`
                if text[at + prefix.end():at + prefix.end() + 1] != "(":
                    raise _Parse
                name = _first_name(text, at + prefix.end() + 1, ",)")
                if name:
                    out.add(name)
            if last == "jit":   # `jit_nospec = triton.jit(do_not_specialize=[...])`: `alias_chain`'s factory
                out.add(_squeeze(prefix.group()))
    return out


_GAP_AT = re.compile(_GAP)


def _first_name(text: str, at: int, ends: str) -> str | None:
    """The dotted name that the expression opening at `at` (after a bracket) is, when one of
    `ends` follows it (`compat.kernel` of `(compat.kernel)`); None when the expression is no
    name (a string, a call, an operation: never an alias). A name that may go on over lines
    (a line break, a backslash or a comment after it, still inside the bracket): parse."""
    at = _GAP_AT.match(text, at).end()
    prefix = _DOTTED_PREFIX.match(text, at)
    if prefix is None:
        if text[at:at + 1] in ("(", "\\", ""):
            raise _Parse   # a bracket in a bracket, a continued line: not read
        return None
    after = text[prefix.end():prefix.end() + 1]
    if after and after in ends:
        return _squeeze(prefix.group())
    if after in ("\n", "\\", "#", ""):
        raise _Parse
    return None


@lru_cache(maxsize=256)
def _assignments_of(heads: frozenset[str]) -> tuple[re.Pattern, re.Pattern]:
    r"""The `name = value` lines (`^[ \t\f]*name[ \t]*=(?!=)(.*)$`, group 1 the value) for the names
    in `heads`: one pattern for the text's first line, one for every later line. Built from the
    names (each file asks about a few, mostly the same ones), since a pattern that opens with the
    line break is scanned for it, and one for any name (`^...(\w+)`) matches nearly every line."""
    names = "|".join(sorted(map(re.escape, heads)))
    tail = rf"[ \t\f]*(?:{names})[ \t]*=(?!=)(.*)"
    return re.compile(tail), re.compile("\n" + tail)


def _squeeze(dotted: str) -> str:
    return "".join(dotted.split())


def _imports_binding(text: str, heads: set[str]) -> list[ast.stmt]:
    """The import statements of the file that bind one of `heads` (each parsed alone)."""
    out: list[ast.stmt] = []
    named = None
    for m in _IMPORT_WORD.finditer(text):
        if not _starts_word(text, m.start()):
            continue
        head = _STATEMENT_HEAD.match(text, text.rfind("\n", 0, m.start()) + 1)
        if head is None or head.end() != m.end():
            # the word in a comment, a string, after `try:` or `;`: what an import there could
            # bind follows the word on its logical line, so one that names none of `heads` and
            # has no `*` binds nothing asked about. After a `#` with no quote before it on its
            # line, the word is in a comment (or in a string that began on an earlier line and
            # does not end before it): it binds nothing
            before = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
            if "#" in before and "'" not in before and '"' not in before:
                continue
            if named is None:
                named = heads | {"*"}
            if not named.isdisjoint(_WORD_OR_STAR.findall(text, m.start(), _statement_end(text, m.start()))):
                raise _Parse
            continue
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


def _statement_end(text: str, at: int) -> int:
    """Where the logical line holding the word `import` at `at` ends: its line, or past the
    closing bracket of `import (`, or past the lines a backslash continues it onto."""
    start = text.rfind("\n", 0, at) + 1
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
    return end


def _import_statement(text: str, at: int) -> list[ast.stmt]:
    """The statement(s) of the logical line whose `import` word starts at `at`, parsed alone."""
    start = text.rfind("\n", 0, at) + 1
    head = _STATEMENT_HEAD.match(text, start)
    if head is None or head.end() != at + len("import"):
        raise _Parse   # the word in a comment, a string, after `try:` or `;`
    end = _statement_end(text, at)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text[start:end].strip()).body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise _Parse from None
