"""Whether a Python file can define a Triton kernel, decided from its text, before any parse.

Every kernel rule (`Rule.language == "triton"`) looks only inside kernels, so a file that cannot
define one gets nothing from them, and the engine need not parse it at all when no other
selected rule wants it either (torch's `sparse/_triton_ops_meta.py`, 7,783 lines of tuning
tables, takes 165 ms to parse and holds no kernel). The test must never say "no kernel" where
`find_kernels` would find one, so it follows how a kernel is recognised: a function whose
decorator (or a call on it) resolves to `triton.jit` through `ImportMap`. That needs one of:

1. the text spells `jit` (`@triton.jit`, `from triton import jit`, `jit = ...`, the guesses
   for a module that cannot be read); or
2. a name imported from a module of the workspace that is bound there to `triton.jit` (a
   re-export under another name: `kernel = triton.jit` in `compat.py`, `from .compat import
   kernel`); or
3. a workspace module imported whole (`import pkg`, `from pkg import compat`, a star import)
   whose attribute is used as a decorator (`@compat.kernel`), or aliased (`k = compat.kernel`),
   or called on a function the file defines (`compat.kernel(fn)`).

So a file that does not spell `jit` can define a kernel only if an import statement of it names
the workspace: each `import` statement is read (the statement alone is parsed) and resolved with
the workspace index; a name bound to `triton.jit` says yes; a module says yes when a decorator
line, an assignment or a call in the text could use it as above. Anything the text test cannot
read for certain (the word `import` outside an import statement's usual place, a statement
that does not parse alone) also says yes: the file is parsed as before.
"""
from __future__ import annotations

import ast
import re
import warnings

from tritonify.diagnostics.triton_ast import canonical

# What `find_kernels` takes for jit (after `canonical`): see triton_ast._jit_like.
_JIT_PATHS = frozenset({"triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit"})
_IMPORT_WORD = re.compile(r"\bimport\b")
_STATEMENT_HEAD = re.compile(r"[ \t]*(?:from[ \t]+[.\w]+[ \t]+)?import\b")
_DECORATOR_LINE = re.compile(r"^[ \t]*@(.*)$", re.MULTILINE)
_DEF_NAME = re.compile(r"\bdef[ \t]+(\w+)")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_DOTTED_PREFIX = re.compile(r"[\w. \t]*")
_CALLEE_BEFORE = re.compile(r"[\w.\s\\]*$")
_ASSIGNED = re.compile(r"\b([A-Za-z_]\w*)[ \t]*=(?!=)")
_GAP = r"(?:\s|\\\n|#[^\n]*\n)*"   # what may stand between tokens: blanks, continuations, comments


def may_define_kernel(text: str, path: str | None = None, workspace=None) -> bool:
    """False only when the file certainly defines no Triton kernel (see the module docstring).
    `workspace`: the `WorkspaceIndex` that resolves the file's imports (None: guesses only, as
    `ImportMap` does for a file with nothing on disk behind it)."""
    if "jit" in text:
        return True
    if "def" not in text:
        return False
    if workspace is not None and not (path and workspace.can_resolve_from(path)):
        workspace = None   # as ImportMap: text with no file behind it resolves by guesses only
    modules: set[str] = set()   # local names bound to a workspace module
    for m in _IMPORT_WORD.finditer(text):
        statement = _import_statement(text, m.start())
        if statement is None:
            return True
        for node in statement:
            verdict = _brings_jit(node, path, workspace, modules)
            if verdict:
                return True
    if not modules:
        return False
    return _module_may_decorate(text, modules)


def _import_statement(text: str, at: int) -> list[ast.stmt] | None:
    """The statement(s) of the logical line whose `import` word starts at `at`, parsed alone;
    None when that line is not plainly an import statement (the word in a comment, a string,
    after `try:` or `;`) or does not parse alone."""
    start = text.rfind("\n", 0, at) + 1
    head = _STATEMENT_HEAD.match(text, start)
    if head is None or head.end() != at + len("import"):
        return None
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    if "(" in text[at:end]:
        close = text.find(")", at)
        if close < 0:
            return None
        end = text.find("\n", close)
        end = len(text) if end < 0 else end
    else:
        while text[start:end].rstrip().endswith("\\") and end < len(text):
            nxt = text.find("\n", end + 1)
            end = len(text) if nxt < 0 else nxt
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text[start:end].strip())
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in tree.body[:1]):
        return None
    return tree.body


def _brings_jit(node: ast.stmt, path: str | None, workspace, modules: set[str]) -> bool:
    """True when the import `node` binds a name to `triton.jit` (or may: a star import from the
    workspace); adds the local names it binds to workspace modules to `modules`."""
    if workspace is None or not isinstance(node, (ast.Import, ast.ImportFrom)):
        return False
    try:
        if isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.split(".")[0]
                if head == "triton":
                    continue
                t = workspace.resolve(head, path)
                if t is not None and t.kind == "module":
                    modules.add(alias.asname or head)
                if alias.asname:   # `import pkg.compat.kernel as k` resolves the whole path
                    t = workspace.resolve(alias.name, path)
                    if t is not None and t.kind == "triton" and canonical(t.path) in _JIT_PATHS:
                        return True
            return False
        if not node.level and (not node.module or node.module.split(".")[0] == "triton"):
            return False   # Triton's own names: `jit` among them would be spelled in the text
        for alias in node.names:
            if alias.name == "*":
                return True   # the names a workspace module exports: not listed here
            if node.level:
                t = workspace.resolve_relative(path, node.level, node.module, alias.name)
            else:
                t = workspace.resolve(f"{node.module}.{alias.name}", path)
            if t is None:
                continue
            if t.kind == "triton" and canonical(t.path) in _JIT_PATHS:
                return True
            if t.kind == "module":
                modules.add(alias.asname or alias.name)
    except (OSError, ValueError, RecursionError):
        return True
    return False


def _module_may_decorate(text: str, modules: set[str]) -> bool:
    """Whether an attribute of the workspace modules bound to `modules` could make a kernel:
    used on a decorator line, aliased by an assignment, or a call given a function of the file
    as its first argument (`compat.kernel(fn)`, `compat.kernel(...)(fn)`)."""
    names = "|".join(sorted(map(re.escape, modules)))
    if re.search(rf"\b(?:{names}){_GAP}\.", text) is None:
        return False   # no attribute of those modules is read anywhere
    assigned = set(_ASSIGNED.findall(text))   # `k = compat.kernel` anywhere (a keyword argument too)
    for m in _DECORATOR_LINE.finditer(text):
        expr = m.group(1).strip()
        if not expr or not (expr[0].isalpha() or expr[0] == "_"):
            return True   # `@(` ... or `@\\`: the decorator goes on over the next lines
        callee = _DOTTED_PREFIX.match(expr).group()   # what `_jit_like` resolves: the name before any `(`
        words = set(_IDENT.findall(callee))
        if words & modules or words & assigned:
            return True
    functions = set(_DEF_NAME.findall(text))
    if not functions:
        return False
    defs = "|".join(sorted(map(re.escape, functions)))
    suspects = modules | assigned
    for m in re.finditer(rf"\({_GAP}(?:{defs})\b", text):   # `callee(fn` with `def fn` in the file
        before = text[max(0, m.start() - 300):m.start()].rstrip()
        if before.endswith((")", "]")):
            return True   # `factory(...)(fn)`: the callee is itself a call
        callee = _CALLEE_BEFORE.search(before).group()
        if set(_IDENT.findall(callee)) & suspects:
            return True
    return False
