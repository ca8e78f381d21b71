"""Run the registered rules over text or files. The CLI and the language server call these."""
from __future__ import annotations

import errno
import gc
import logging
import os
import stat
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import STATEMENT_SCOPE, RegisteredRule, Rule, all_rules
from tritonify.diagnostics.settings import DEFAULT_EXCLUDE, Settings
from tritonify.diagnostics.source import SourceFile
from tritonify.diagnostics.workspace_index import default_index
from tritonify.infra.bounded_read import NotReadable, TooLarge, pseudo_file, read_bytes, read_stream, read_text

log = logging.getLogger(__name__)

PYTHON_SUFFIXES = {".py", ".pyi"}
CUDA_SUFFIXES = {".cu", ".cuh"}
GITIGNORE_MAX_BYTES = 1_000_000

# Problems with the file itself (not a rule): syntax errors, undecodable bytes, size.
SYNTAX = Rule(code="TRI000", name="invalid-file", summary="the file cannot be read or parsed", severity=Severity.ERROR)


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None          # a problem that stopped part of the analysis
    notes: list[str] = field(default_factory=list)  # warnings about the file ("line 3: ...")
    exports_changed: bool = False     # the editor's text changed what other files import from it
    disk_changed: bool = False        # ... or a module changed on disk (which one is not known)
    parsed: bool = True               # False: no selected rule could apply, so the file was not parsed


def _file_finding(path: str, message: str, line: int = 1, column: int = 0) -> Finding:
    return Finding(
        code=SYNTAX.code, message=message, line=max(1, line), column=max(0, column),
        end_line=max(1, line), end_column=max(0, column) + 1, severity=Severity.ERROR, path=path,
        url=SYNTAX.url,
    )


def _too_large(path: str, size: int | None, settings: Settings) -> Finding:
    said = f"file is {size / 1e6:.1f} MB, over" if size is not None else "file is over"
    return _file_finding(path, f"{said} the {settings.max_file_bytes / 1e6:.0f} MB "
                               "lint limit (max-file-bytes in [tool.tritonify]); not checked")


# id(settings) -> (a weak reference to it, its rules by (language, path)); kept beside the
# object, not on it, since Settings travel to the lint worker by pickle
_RULE_SETS: dict[int, tuple[weakref.ref, dict]] = {}


def _enabled_rules(settings: Settings, path: str, language: str) -> list[RegisteredRule]:
    """The rules `settings` enable for `path` in `language`: worked out once per Settings object
    (and per path where per-file-ignores can tell paths apart; Settings is frozen), not for
    every rule of every file."""
    entry = _RULE_SETS.get(id(settings))
    if entry is None or entry[0]() is not settings:
        entry = _RULE_SETS[id(settings)] = (weakref.ref(settings, lambda _, k=id(settings): _RULE_SETS.pop(k, None)), {})
    cache = entry[1]
    key = (language, path if settings.per_file_ignores else None)
    hit = cache.get(key)
    if hit is None:
        if len(cache) > 4096:   # an editor session over many files with per-file-ignores
            cache.clear()
        hit = cache[key] = tuple(_select_rules(settings, path, language))
    return list(hit)


def _select_rules(settings: Settings, path: str, language: str) -> list[RegisteredRule]:
    out = []
    for r in all_rules():
        lang = r.rule.language
        if language == "python" and lang == "cuda":
            continue
        if language == "cuda" and lang != "cuda":
            continue
        if settings.enabled(r.code, path):
            out.append(r)
    return out


def _finish(findings: Iterable[Finding], source_noqa, settings: Settings, path: str) -> list[Finding]:
    out = []
    for f in findings:
        # TRI000 is not a rule but the file itself (cannot be parsed, read or decoded, too large):
        # no selection hides it, as ruff reports syntax errors under any selection; a file that
        # cannot be parsed never passes (`--select TRI001` said "All checks passed")
        if f.code != SYNTAX.code and not settings.enabled(f.code, path):
            continue
        if source_noqa is not None and source_noqa(f.code, f.line, f.end_line):
            continue
        f.severity = settings.severity_for(f.code, f.severity)
        f.path = path
        out.append(f)
    out.sort(key=Finding.sort_key)
    return out


@contextmanager
def _cyclic_gc_paused():
    """Pause Python's cyclic garbage collector while one file is linted. Parsing and the rules
    allocate hundreds of thousands of short-lived objects that reference counting frees; the
    collector's passes over them cost about a tenth of the lint time. It is switched back on
    after the file (a later pass collects any cycle left), and left alone when already off."""
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def lint_source(source: SourceFile, settings: Settings | None = None, workspace=None,
                statements_first: Callable[[FileResult], None] | None = None,
                kernels: list | None = None) -> FileResult:
    """Lint a parsed Python source (Triton kernels and embedded CUDA). `workspace`: the
    `WorkspaceIndex` that resolves imports from other modules (default: the process's).
    `statements_first`: called, before the other rules run, with the findings of the rules of
    statement scope (`Rule.scope`) alone; the result returned is the same as without it.
    `kernels`: the source's kernels (`find_kernels` of its tree with that workspace), when the
    caller found them already."""
    with _cyclic_gc_paused():
        return _lint_source(source, settings, workspace, statements_first=statements_first, kernels=kernels)


def _statement_rules_first(rules: list[RegisteredRule]) -> tuple[list[RegisteredRule], int]:
    """`rules` with those of statement scope first, and how many those are."""
    first = [r for r in rules if r.rule.scope == STATEMENT_SCOPE]
    return first + [r for r in rules if r.rule.scope != STATEMENT_SCOPE], len(first)


def _lint_source(source: SourceFile, settings: Settings | None = None, workspace=None,
                 rules: tuple[list[RegisteredRule], list[RegisteredRule]] | None = None,
                 statements_first: Callable[[FileResult], None] | None = None,
                 kernels: list | None = None) -> FileResult:
    settings = settings or Settings()
    result = FileResult(source.path)
    findings: list[Finding] = []
    if source.decode_problem:
        findings.append(_file_finding(source.path, source.decode_problem))
    if source.syntax_error is not None:
        err = source.syntax_error
        line = err.lineno or 1
        col = max(0, (err.offset or 1) - 1)
        msg = err.msg or "invalid syntax"
        findings.append(_file_finding(source.path, f"SyntaxError: {msg}; fix it to see Tritonify's findings for this file", line, col))
        result.error = f"SyntaxError: {msg} at {line}:{col + 1}"
        result.findings = _finish(findings, source.is_suppressed, settings, source.path)
        return result
    if "noqa" in source.text:
        from tritonify.diagnostics.noqa import unknown_code_note, unknown_codes

        result.notes.extend(unknown_code_note(line, code) for line, code in unknown_codes(source))
    ctx = PythonContext(source, settings=settings, workspace=workspace if workspace is not None else default_index())
    if kernels is not None:
        ctx.__dict__["kernels"] = kernels   # the cached property, found already
    python_rules, cuda_rules = rules or (_enabled_rules(settings, source.path, "python"),
                                         _enabled_rules(settings, source.path, "cuda"))
    early = 0
    if statements_first is not None:
        python_rules, early = _statement_rules_first(python_rules)

    def first_answer() -> None:
        if early and statements_first is not None:
            statements_first(FileResult(source.path, _finish([replace(f) for f in findings], source.is_suppressed,
                                                             settings, source.path), error=result.error))

    for n, reg in enumerate(python_rules):
        if n == early:
            first_answer()
        ctx.rule = reg.rule
        try:
            found = list(reg.check(ctx))
            if ctx.dead_code_findings:   # compile breaks in code that cannot run: ctx.guarded_out (a size guard or a ctx flag rules it out, a left-over helper or replaced kernel)
                found = [f for f in found if id(f) not in ctx.dead_code_findings]
                ctx.dead_code_findings.clear()
            findings.extend(found)
        except RecursionError:
            log.warning("%s: %s gave up on a deeply nested expression", source.path, reg.code)
        except Exception as exc:  # one broken rule must not hide the others
            log.exception("rule %s failed on %s", reg.code, source.path)
            result.error = f"internal error in {reg.code}: {type(exc).__name__}: {exc}"
    if early == len(python_rules):
        first_answer()
    ctx.release()
    findings.extend(_embedded_cuda(source, settings, cuda_rules))
    result.findings = _finish(findings, source.is_suppressed, settings, source.path)
    return result


def _embedded_cuda(source: SourceFile, settings: Settings,
                   rules: list[RegisteredRule] | None = None) -> list[Finding]:
    rules = _enabled_rules(settings, source.path, "cuda") if rules is None else rules
    if not rules or source.tree is None:
        return []
    try:
        from tritonify.diagnostics.cuda import embedded
    except ImportError:
        return []
    if not embedded.might_embed_cuda(source):
        return []
    try:
        return list(embedded.check_python_source(source, rules))
    except Exception:
        log.exception("embedded CUDA analysis failed on %s", source.path)
        return []


def lint_cuda_text(text: str, path: str, settings: Settings | None = None) -> FileResult:
    settings = settings or Settings()
    result = FileResult(path)
    rules = _enabled_rules(settings, path, "cuda")
    try:
        from tritonify.diagnostics.cuda import embedded
    except ImportError as exc:
        result.error = f"CUDA analysis unavailable: {exc}"
        return result
    src = SourceFile(text=text, path=path)
    try:
        findings = list(embedded.check_cuda_text(text, path, rules))
    except embedded.syntax.TooDeeplyNested as exc:
        findings = [_file_finding(path, str(exc))]
    except Exception as exc:
        log.exception("CUDA analysis failed on %s", path)
        result.error = f"internal error in CUDA analysis: {type(exc).__name__}: {exc}"
        findings = []
    result.findings = _finish(findings, src.is_suppressed, settings, path)
    if "noqa" in text:
        from tritonify.diagnostics.noqa import unknown_code_note, unknown_cuda_codes

        result.notes.extend(unknown_code_note(line, code) for line, code in unknown_cuda_codes(text))
    return result


def language_of(path: str) -> str | None:
    suffix = Path(path).suffix.lower()
    if suffix in PYTHON_SUFFIXES:
        return "python"
    if suffix in CUDA_SUFFIXES:
        return "cuda"
    return None


def lint_text(text: str | bytes, path: str = "<string>", settings: Settings | None = None,
              workspace=None, *, on_disk: bool = False) -> FileResult:
    """Lint the contents of one file (as the editor holds it, saved or not). `on_disk`: the
    text is the file's content on disk (the workspace index may keep its summary)."""
    with _cyclic_gc_paused():
        return _lint_text(text, path, settings, workspace, on_disk)


def _lint_text(text: str | bytes, path: str = "<string>", settings: Settings | None = None,
               workspace=None, on_disk: bool = False) -> FileResult:
    settings = settings or Settings()
    size = len(text)
    if size > settings.max_file_bytes:
        return FileResult(path, [_too_large(path, size, settings)])
    if language_of(path) == "cuda":
        if isinstance(text, bytes):
            from tritonify.diagnostics.source import decode_source

            text, problem = decode_source(text)
        return lint_cuda_text(text, path, settings)
    problem = None
    if isinstance(text, bytes):
        from tritonify.diagnostics.source import decode_source

        text, problem = decode_source(text)
    workspace = workspace if workspace is not None else default_index()
    rules = _enabled_rules(settings, path, "python"), _enabled_rules(settings, path, "cuda")
    if not _needs_tree(text, path, workspace, *rules):
        return _unparsed(text, path, problem, settings)
    source = SourceFile.from_text(text, path)
    source.decode_problem = problem
    if on_disk:
        workspace.observe(path, source.text, source.tree)
    return _lint_source(source, settings, workspace, rules)   # lint_text has paused the collector


def needs_parse(text: str, path: str, settings: Settings, workspace=None) -> bool:
    """Whether `lint_text` parses this Python text (False: no selected rule could report on it,
    and it answers without a parse, a syntax error included). The language server asks first."""
    workspace = workspace if workspace is not None else default_index()
    return _needs_tree(text, path, workspace, _enabled_rules(settings, path, "python"), _enabled_rules(settings, path, "cuda"))


def _needs_tree(text: str, path: str, workspace, python_rules: list[RegisteredRule],
                cuda_rules: list[RegisteredRule]) -> bool:
    """Whether any selected rule could report on this file, or it may define a kernel (then TRI000
    may: a syntax error is reported under any selection). Kernel rules (`language ==
    "triton"`) look only inside kernels: a file that cannot define one (`kernel_screen`) gives
    them nothing. Another Python rule counts unless its module's `may_fire(text)` says no; the
    CUDA rules unless no run-time compiler is named."""
    from tritonify.diagnostics.kernel_screen import may_define_kernel

    if "\0" in text:
        return True   # cannot be parsed: said once as TRI000, cheaply known without a parse
    for reg in python_rules:
        if reg.rule.language == "triton":
            continue   # these look only inside kernels: the screen below decides for them
        may_fire = getattr(reg.module, "may_fire", None)
        if may_fire is None or may_fire(text):
            return True
    if cuda_rules:
        try:
            from tritonify.diagnostics.cuda.embedded import mentions_cuda_compiler
        except ImportError:
            pass
        else:
            if mentions_cuda_compiler(text):
                return True
    # a file that may define a kernel is parsed whatever is selected: its syntax error (TRI000)
    # shows under any selection, as ruff's do (issue 31), and it never passes unparsed
    return may_define_kernel(text, path, workspace)


def _unparsed(text: str, path: str, problem: str | None, settings: Settings) -> FileResult:
    """The result for a file no selected rule could report on: not parsed (so a syntax error in
    it is not reported either), only what its bytes and `# noqa` comments say."""
    result = FileResult(path, parsed=False)
    source = SourceFile(text=text, path=path, decode_problem=problem)
    findings = [_file_finding(path, problem)] if problem else []
    result.findings = _finish(findings, source.is_suppressed, settings, path)
    if "noqa" in text:
        from tritonify.diagnostics.noqa import unknown_code_note, unknown_codes

        result.notes.extend(unknown_code_note(line, code) for line, code in unknown_codes(source))
    return result


def read_source(path: Path, settings: Settings) -> bytes | FileResult:
    """The bytes of the file to lint, or the result that says why it was not read: the size limit
    is applied before reading, and a FIFO, a device or a pseudo-file (/proc/kmsg behind a link)
    is refused without blocking (infra.bounded_read)."""
    try:
        return read_bytes(path, settings.max_file_bytes)
    except TooLarge as exc:
        return FileResult(str(path), [_too_large(str(path), exc.size, settings)])
    except NotReadable as exc:
        return FileResult(str(path), [_file_finding(str(path), f"not read: {exc}")], error=str(exc))
    except OSError as exc:
        return FileResult(str(path), [_file_finding(str(path), f"cannot read file: {exc.strerror or exc}")], error=str(exc))


def read_stream_source(stream, path: str, settings: Settings) -> bytes | FileResult:
    """`read_source` for a stream (`--stdin-filename`): at most max-file-bytes are read."""
    try:
        return read_stream(stream, settings.max_file_bytes)
    except TooLarge:
        return FileResult(path, [_too_large(path, None, settings)])


def lint_file(path: Path, settings: Settings | None = None, workspace=None) -> FileResult:
    settings = settings or Settings()
    data = read_source(path, settings)
    if isinstance(data, FileResult):
        return data
    return lint_text(data, str(path), settings, workspace, on_disk=True)


# ---- file discovery ---------------------------------------------------------------------------

def _gitignore_spec(root: Path):
    try:
        import pathspec
    except ImportError:  # pragma: no cover
        return None
    patterns: list[str] = []
    for ignore in (root / ".gitignore",):
        if ignore.is_file():
            try:
                patterns.extend(read_text(ignore, GITIGNORE_MAX_BYTES, errors="replace").splitlines())
            except OSError:   # a link to a FIFO or /proc/kmsg, too large: no patterns from it
                pass
    return pathspec.PathSpec.from_lines("gitwildmatch", patterns) if patterns else None


def _not_regular(path: Path) -> str | None:
    """Why `path` cannot be linted as a file (None for a regular file, or a link to one).
    Reading a FIFO or a device would block or never end, so those are never opened."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if path.is_symlink():
            return "broken symbolic link" + (" (a loop of links)" if exc.errno == errno.ELOOP else "")
        return f"cannot read it ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return pseudo_file(path)   # /proc/kmsg behind a link says it is regular, and blocks a read
    if stat.S_ISDIR(mode):
        return "a folder"
    kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
    return f"{kind}, not a regular file"


def iter_files(paths: Iterable[str | Path], settings: Settings,
               skipped: list[tuple[Path, str]] | None = None) -> Iterator[Path]:
    """Python and CUDA files under `paths`, honouring .gitignore and the exclude settings.

    A file named explicitly is always checked (as ruff does), even if excluded. Special files
    (FIFOs, sockets, devices), broken links and unreadable folders are never opened: each is
    appended to `skipped` as (path, reason). A symbolic link to a file is followed wherever it
    points (it is matched against .gitignore and the excludes by its own path); links to
    folders are not followed."""
    import pathspec

    def skip(path: Path, reason: str) -> None:
        if skipped is not None:
            skipped.append((path, reason))

    exclude = pathspec.PathSpec.from_lines("gitwildmatch", [*DEFAULT_EXCLUDE, *settings.exclude])
    seen: set[Path] = set()
    for raw in paths:
        p = Path(raw)
        if not p.is_dir():
            why = _not_regular(p)
            if why is not None:
                skip(p, why)
            elif p not in seen:
                seen.add(p)
                yield p
            continue
        root = p
        git_specs: dict[Path, object] = {}

        def unreadable(exc: OSError) -> None:
            skip(Path(exc.filename or p), f"cannot read the folder ({exc.strerror or exc})")

        for dirpath, dirnames, filenames in os.walk(p, onerror=unreadable):
            d = Path(dirpath)
            spec = _gitignore_spec(d)
            if spec is not None:
                git_specs[d] = spec

            def ignored(child: Path, is_dir: bool) -> bool:
                rel_root = _rel(child, settings.root) or _rel(child, root) or child.name
                probe = rel_root + ("/" if is_dir else "")
                if exclude.match_file(probe):
                    return True
                for base, s in git_specs.items():
                    rel = _rel(child, base)
                    if rel is not None and s.match_file(rel + ("/" if is_dir else "")):
                        return True
                return False

            dirnames[:] = sorted(x for x in dirnames if not x.startswith(".") and not ignored(d / x, True))
            for name in sorted(filenames):
                f = d / name
                if not language_of(name) or f in seen or ignored(f, False):
                    continue
                why = _not_regular(f)
                if why is not None:
                    skip(f, why)
                    continue
                seen.add(f)
                yield f


def _rel(path: Path, base: Path | None) -> str | None:
    """`path` relative to `base` (a link is matched by where it is, not by where it points);
    None when it is not under `base`."""
    if base is None:
        return None
    try:
        where = Path(path).absolute()
        return (where.parent.resolve() / where.name).relative_to(Path(base).resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):
        return None
