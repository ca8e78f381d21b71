"""Linting in a worker process, so that no document can stall or crash the server.

A rule that is slow on some input (a quadratic walk over a 5 MB file), that recurses until
the interpreter dies, or that loops, runs in this worker, not in the server: the server's event
loop stays free to answer requests, a lint that takes longer than its time limit is stopped
(the worker is killed and started again) and reported as a TRI000 finding, and a worker that
dies is replaced on the next lint.

Wire format between the server and the worker (both our own code): frames of an 8-byte
big-endian length and a pickle. Request: `(document, path, settings, mode)`, where `document` is
`("text", text)` or, for a document this worker holds a version of, `("edits", edits, encoding,
length, crc32)`: the client's edits since the version this worker last got (LSP ranges,
server.text_edits), and the length and CRC-32 of the text they must give; the worker keeps the
one copy of each document's text (`_TEXTS`) that all its lints read. Mode "full" (lint it all)
or "incremental" (re-lint only the kernels changed since this worker's last lint of that path:
diagnostics.incremental). Answer: `("ok", (FileResult, [KernelSpan], exact))`, `("error", message)`,
`("resync", None)` when the worker does not hold the text the edits apply to (or they gave another
text: the server then sends the text), or, for a lint the server interrupted (SIGUSR1: its
version was superseded), `("cancelled", None)`. An incremental lint that lints something again
may first send `("first", (FileResult, [KernelSpan], False))`: the findings of the
statement-scope rules (`Rule.scope`) on what it lints again, every other finding carried over,
sent before the rules of kernel scope run; its answer follows.

A Python text that does not parse (a statement half typed) is linted with that statement
neutralised (`_tolerant`, diagnostics.reparse.tolerant_parse): its syntax error is one TRI000 on
its line, beside the findings and kernels of the rest of the file.
"""
from __future__ import annotations

import asyncio
import gc
import pickle
import signal
import sys
import time
import zlib
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from tritonify.diagnostics.engine import SYNTAX, FileResult, language_of, lint_text, needs_parse
from tritonify.diagnostics.incremental import Previous, lint_incremental
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.reparse import reparse, tolerant_parse
from tritonify.diagnostics.settings import Settings
from tritonify.diagnostics.source import SourceFile
from tritonify.diagnostics.triton_ast import ImportMap, find_kernels
from tritonify.diagnostics.workspace_index import default_index
from tritonify.infra.child_process import start_piped
from tritonify.infra.safe_start import module_command
from tritonify.server import latency_trace as trace
from tritonify.server.text_edits import Edit, apply_edits

HEADER = 8
INTERRUPT_WAIT_S = 2.0   # how long an interrupted lint may take to answer before its worker is killed
WORKER_COMMAND = module_command("tritonify.server.lint_worker")   # no workspace folder on its sys.path (infra.safe_start)


def _frame(obj) -> bytes:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return len(data).to_bytes(HEADER, "big") + data


# The server interrupts a lint it no longer wants (its version superseded by the next key) with
# this signal: the lint stops, the worker answers ("cancelled", None) and goes on with the next
# request, with no restart. A signal between lints is ignored (the answer already sent stands).
# A signal during a part of the lint that must not be cut short (the workspace index taking the
# new text) is kept, and stops the lint where it next may be stopped (`_interruptible`): a lint
# the server no longer wants never runs to its end.
INTERRUPT = getattr(signal, "SIGUSR1", None)
IDLE, BUSY, INTERRUPTIBLE = "idle", "busy", "interruptible"
FIRST = "first"   # the status of a first answer's frame (lint_with_kernels' first_answer): the answer follows
RESYNC = "resync"   # the answer to edits of a text the worker does not hold: send the text
# Collector passes: automatic ones are off in the worker (a pass over its long-lived objects,
# the workspace index and the last parse's tree, took 15-25 ms and fell inside lints while
# typing). It collects after answering: after a lint once typing paused (modes COLLECT_AFTER)
# and every COLLECT_EVERY requests, and freezes what survives (gc.freeze), so that a pass looks
# only at what was made since the last one (about 0.1 ms after a lint of one kernel); what was
# frozen and became garbage since is collected by a whole pass (25-80 ms) at the first pause
# after UNFREEZE_EVERY requests. Measured on typing into gemlite's quant_utils.py: each round of
# 13 keys left about 230 objects in cycles, and none of the frozen ones became garbage.
COLLECT_AFTER = ("full",)
COLLECT_EVERY = 50
UNFREEZE_EVERY = 1000


class Interrupted(BaseException):
    """Raised in the lint by INTERRUPT (a BaseException: no rule's `except Exception` swallows it)."""


_state = IDLE
_interrupt_pending = False


def _on_interrupt(signum, frame) -> None:
    global _interrupt_pending
    if _state == INTERRUPTIBLE:
        raise Interrupted()
    if _state == BUSY:
        _interrupt_pending = True


@contextmanager
def _interruptible():
    """A part of a lint that an interrupt may stop (one kept from before stops it here)."""
    global _state
    if _interrupt_pending:
        raise Interrupted()
    _state = INTERRUPTIBLE
    try:
        yield
    finally:
        _state = BUSY


_since_unfreeze = 0


def _collect(mode: str, served: int) -> None:
    """The collector pass after an answer (see COLLECT_AFTER)."""
    global _since_unfreeze
    _since_unfreeze += 1
    if mode in COLLECT_AFTER or served % COLLECT_EVERY == 0:
        if mode in COLLECT_AFTER and _since_unfreeze >= UNFREEZE_EVERY:
            gc.unfreeze()
            _since_unfreeze = 0
        gc.collect()
        gc.freeze()


def serve_worker(stdin=None, stdout=None) -> int:
    """The worker's loop: read a request, lint, answer; until stdin closes."""
    global _state, _interrupt_pending
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    sys.stdout = sys.stderr   # a stray print() must not corrupt the frames
    if INTERRUPT is not None:
        signal.signal(INTERRUPT, _on_interrupt)
    gc.disable()
    served = 0
    while True:
        header = stdin.read(HEADER)
        if len(header) < HEADER:
            return 0
        payload = stdin.read(int.from_bytes(header, "big"))
        _state, _interrupt_pending = BUSY, False   # a signal for the last request came before this one
        mode = "full"
        try:
            document, path, settings, mode = pickle.loads(payload)
            text = document_text(document, path)
            if text is None:
                answer = (RESYNC, None)
            else:
                trace.event("w.request", mode=mode, chars=len(text), edits=document[0] == "edits")
                answer = ("ok", lint_with_kernels(text, path, settings, mode,
                                                  _sender(stdout) if mode == "incremental" else None))
        except Interrupted:
            answer = ("cancelled", None)
        except Exception as exc:   # the server turns this into a message; the worker goes on
            answer = ("error", f"{type(exc).__name__}: {exc}")
        try:
            frame = _frame(answer)
        except Exception as exc:   # e.g. a finding that does not pickle
            frame = _frame(("error", f"cannot send the result: {type(exc).__name__}: {exc}"))
        _state = IDLE
        stdout.write(frame)
        stdout.flush()
        trace.event("w.answered", status=answer[0])
        served += 1
        _collect(mode, served)


# After a first answer, the rest of an incremental lint (the rules of kernel scope over the edited
# kernel: 30-150 ms on fla's parallax kernels) waits this long, interruptible, before it runs: while
# someone types, the next key comes sooner and interrupts it, so the worker does not spend the CPU the
# editor's own processes need on a lint that would be cut short anyway (in a real-editor run typing 70 ms
# apart, 235 of 743 lints were interrupted after about 70 ms of that work each). The first answer, which
# shows what was just typed, is not delayed; the whole answer comes this much later once typing pauses.
REST_AFTER_S = 0.1


def _sender(stdout):
    """What sends a first answer as a FIRST frame: whole, whatever signal comes meanwhile (an
    interrupt then stops the lint right after it, as one kept from before would); then waits
    REST_AFTER_S, interruptible, before the lint goes on."""
    def send(answer: Answer) -> None:
        global _state
        try:
            frame = _frame((FIRST, answer))
        except Exception:   # noqa: S110 - a finding that does not pickle: the whole answer says so
            return
        was, _state = _state, BUSY
        try:
            stdout.write(frame)
            stdout.flush()
        finally:
            _state = was
        if _interrupt_pending and was == INTERRUPTIBLE:
            raise Interrupted()
        if was == INTERRUPTIBLE:
            time.sleep(REST_AFTER_S)   # an interrupt meanwhile raises Interrupted here (_on_interrupt)

    return send


@dataclass(frozen=True)
class Revision:
    """Which version of which open document a text is (server.documents.ChangeLog): `key` is the
    document's open generation (a document closed and opened again is another), `edits_since(v)`
    the client's edits from version `v` to this one (None when they are not kept)."""

    key: object
    version: int | None
    encoding: str
    edits_since: Callable[[int | None], list[Edit] | None]


@dataclass(frozen=True)
class KernelSpan:
    """Where a `@triton.jit` function is: its name, its first line (decorators included) and
    its last line, 1-based."""

    name: str
    first_line: int
    last_line: int


class _Recent(OrderedDict):
    """A dict that keeps only its RECENT_PATHS most recently set entries: the worker is not told
    when a document closes, and the trees of every file ever opened would otherwise stay, each
    making every collector pass longer (measured: full passes of 500-600 ms after 80 files)."""

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > RECENT_PATHS:
            self.popitem(last=False)


RECENT_PATHS = 8
# path -> the text of its document as the server last sent it (whole or as edits): what every lint
# of it here reads
_TEXTS: dict[str, str] = _Recent()
# path -> what this worker's last lint of it left to reuse (one open document per path)
_PREVIOUS: dict[str, Previous] = _Recent()
# path -> (text, tree) of its last parse here: the next text is parsed from it (diagnostics.reparse)
_TREES: dict[str, tuple[str, object]] = _Recent()
MODES = ("full", "incremental")
Answer = tuple[FileResult, list[KernelSpan], bool]


def text_crc(text: str) -> int:
    """The CRC-32 of a text (its UTF-8, lone surrogates kept), to check a copy made by edits."""
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def document_text(document: tuple, path: str) -> str | None:
    """The text a request's `document` stands for, kept as this worker's copy of `path`; None
    when it is edits to a text this worker does not hold or they give another text than the
    server's (its length and CRC-32): the server then sends the whole text."""
    if document[0] == "text":
        text = document[1]
    else:
        _, edits, encoding, length, crc = document
        held = _TEXTS.get(path)
        if held is None:
            return None
        text = apply_edits(held, edits, encoding)
        if len(text) != length or text_crc(text) != crc:
            _TEXTS.pop(path, None)
            return None
    _TEXTS[path] = text
    return text


def lint_with_kernels(text: str, path: str, settings: Settings, mode: str = "full",
                      first_answer: Callable[[Answer], None] | None = None) -> Answer:
    """`lint_text`, plus where the kernels are and whether the findings are exact (a full lint)
    or partly carried over (an incremental one), from one parse of a Python file.
    `first_answer` (mode "incremental"): called with the first answer when something is linted
    again (diagnostics.incremental's `statements_first`: the statement-scope findings of what was
    just typed, the others carried over), before the rules of kernel scope run."""
    if mode not in MODES:
        raise ValueError(f"unknown lint mode {mode!r}")
    if language_of(path) != "python" or len(text) > settings.max_file_bytes:
        _PREVIOUS.pop(path, None)
        return lint_text(text, path, settings), [], True
    index = default_index()
    if not needs_parse(text, path, settings, index):   # no kernel can be defined here: as `tritonify check` does
        _PREVIOUS.pop(path, None)
        disk = index.refresh_disk()
        changed = index.update(path, text) or disk
        result = lint_text(text, path, settings, index)
        result.exports_changed, result.disk_changed = changed, disk
        return result, [], True
    with _interruptible():
        source, broken, blanked = _parse_once(text, path)
    trace.event("w.parsed", tolerant=bool(blanked))
    disk = index.refresh_disk()
    changed = index.update(path, text, source.tree) or disk   # other files importing this one see the editor's text
    trace.event("w.indexed")
    previous = _PREVIOUS.get(path) if mode == "incremental" else None

    def finished(result: FileResult) -> FileResult:
        if blanked:
            kept = [f for f in (_kept_apart_from(f, blanked) for f in result.findings) if f is not None]
            result.findings = sorted(kept + _syntax_findings(broken), key=Finding.sort_key)
        result.exports_changed, result.disk_changed = changed, disk
        return result

    def first(result: FileResult) -> None:
        trace.event("w.first", findings=len(result.findings))
        first_answer((finished(result), _spans(kernels), False))

    with _interruptible():   # what is kept for the next lint is set after it
        kernels = _kernels(source)
        trace.event("w.kernels", count=len(kernels or ()))
        linted, nxt = lint_incremental(source, settings, index, previous, kernels,
                                       first if first_answer is not None and previous is not None else None)
    trace.event("w.linted", exact=linted.exact, relinted=list(linted.relinted), statements=linted.statements,
                full_because=linted.full_because, findings=len(linted.result.findings))
    if nxt is None:
        _PREVIOUS.pop(path, None)
    else:
        _PREVIOUS[path] = nxt
    result = finished(linted.result)
    return result, _spans(kernels), linted.exact


# path -> (text, (source, broken, blanked)) of its last version parsed here: a second lint of one
# version (the confirming full lint after the incremental one) parses nothing
_PARSES: dict[str, tuple[str, tuple]] = _Recent()
PARSE_COUNT = [0]   # parses done (a test counts them per version)


def _parse_once(text: str, path: str) -> tuple[SourceFile, SourceFile | None, frozenset[int]]:
    """(the source to lint, the text as typed when it does not parse, the lines neutralised to
    make it parse) of `text`, made once per version of `path` (see _PARSES)."""
    last = _PARSES.get(path)
    if last is not None and last[0] == text:
        return last[1]
    PARSE_COUNT[0] += 1
    source = _parsed(text, path)
    broken, blanked = None, frozenset()
    if source.tree is None and source.syntax_error is not None:   # a statement half typed
        broken, (source, blanked) = source, _tolerant(source, path)
    _PARSES[path] = (text, (source, broken, blanked))
    return source, broken, blanked


def _parsed(text: str, path: str) -> SourceFile:
    """`text` parsed, by parsing again only the statements changed since the last parse of
    `path` here when that can be done (diagnostics.reparse), else in full."""
    old = _TREES.get(path)
    tree = reparse(old[0], old[1], text, path) if old is not None else None
    source = SourceFile(text=text, path=path, tree=tree) if tree is not None else SourceFile.from_text(text, path)
    trace.event("w.parse", reparsed=tree is not None)
    if source.tree is not None:
        _TREES[path] = (text, source.tree)
    return source


SYNTAX_WHILE_TYPING = "SyntaxError: {msg}; until it parses, the findings are those of the file without this statement"


def _tolerant(broken: SourceFile, path: str) -> tuple[SourceFile, frozenset[int]]:
    """The text being typed, made to parse by neutralising the statement that does not
    (diagnostics.reparse.tolerant_parse, from the last text of `path` that parsed here), and the
    lines neutralised; `broken` itself and no lines when that cannot be done. Linting it keeps the
    findings and kernels of everything else while a statement is incomplete, where the whole file
    used to give one TRI000 (and its code lenses vanished) on almost every key."""
    good = _TREES.get(path)
    made = tolerant_parse(broken.text, good[0] if good else None, good[1] if good else None,
                          broken.syntax_error, path)
    if made is None:
        return broken, frozenset()
    return SourceFile(text=made.text, path=path, tree=made.tree), made.blanked


def _spans_lines(start_line: int, end_line: int, end_column: int) -> range:
    """The lines a range covers text of (one that ends at column 0 of a line does not cover it)."""
    last = end_line - 1 if end_column == 0 and end_line > start_line else end_line
    return range(start_line, last + 1)


def _kept_apart_from(finding: Finding, lines: frozenset[int]) -> Finding | None:
    """`finding` when it is not on one of `lines` (the neutralised ones), without the fixes that
    would edit one of them (their text there is not the document's); None when it is on one."""
    if any(n in lines for n in _spans_lines(finding.line, finding.end_line, finding.end_column)):
        return None
    fixes = [fix for fix in finding.fixes
             if not any(n in lines for e in fix.edits for n in _spans_lines(e.start_line, e.end_line, e.end_column))]
    if len(fixes) == len(finding.fixes):
        return finding
    kept = replace(finding)   # a copy: the finding itself may be the base the next lint carries over
    kept.fixes = fixes
    return kept


def _syntax_findings(broken: SourceFile) -> list[Finding]:
    """The syntax error of the text as typed, where it is (TRI000), worded for a file whose other
    findings are shown. Its range is what Python's own caret marks (the offset to the end offset
    on that line, else the one character at the offset), not the rest of the line: typing on
    after an unclosed `(` or quote then leaves the finding as it was, so the editor is not handed
    a new one per key (a squiggle that grew with each key, and a Problems row redrawn)."""
    err = broken.syntax_error
    msg = (err.msg if err is not None else "") or "invalid syntax"
    line = max(1, (err.lineno if err is not None else 1) or 1)
    column = max(0, ((err.offset if err is not None else 1) or 1) - 1)
    end_offset = getattr(err, "end_offset", None) if err is not None else None
    same_line = err is not None and getattr(err, "end_lineno", None) in (None, err.lineno)
    end_column = end_offset - 1 if same_line and isinstance(end_offset, int) and end_offset - 1 > column else column + 1
    return [Finding(code=SYNTAX.code, message=SYNTAX_WHILE_TYPING.format(msg=msg), line=line, column=column,
                    end_line=line, end_column=end_column, severity=Severity.ERROR,
                    path=broken.path, url=SYNTAX.url)]


def _kernels(source: SourceFile) -> list | None:
    """The file's kernels (None when it does not parse)."""
    if source.tree is None:
        return None
    try:
        return find_kernels(source.tree, ImportMap(source.tree, workspace=default_index(), path=source.path))
    except RecursionError:
        return None


def _spans(kernels) -> list[KernelSpan]:
    return [KernelSpan(k.name, min([k.node.lineno, *(d.lineno for d in k.node.decorator_list)]),
                       k.node.end_lineno or k.node.lineno) for k in kernels or ()]


def stopped_result(path: str, why: str) -> Answer:
    """A result that says the file was not (fully) checked, and why."""
    finding = Finding(code=SYNTAX.code, message=why, line=1, column=0, end_line=1, end_column=1,
                      severity=Severity.WARNING, path=path, url=SYNTAX.url)
    return FileResult(path, [finding], error=why), [], True


WARM_UP = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef warm_up(x_ptr, BLOCK: tl.constexpr):\n"
           "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2.0)\n")
WARM_UP_PATH = "/nonexistent/tritonify-warm-up.py"   # no importable module name: no other file can import it


async def _read_frame(proc: asyncio.subprocess.Process, timeout_s: float) -> bytes:
    """One frame's payload from the worker, within `timeout_s` (asyncio.TimeoutError past it)."""
    header = await asyncio.wait_for(proc.stdout.readexactly(HEADER), timeout_s)
    return await asyncio.wait_for(proc.stdout.readexactly(int.from_bytes(header, "big")), timeout_s)


class LintWorker:
    """The server's side: one worker process, one lint at a time, a time limit per lint."""

    def __init__(self, command: Sequence[str] = WORKER_COMMAND):
        self.command = list(command)
        self._proc: asyncio.subprocess.Process | None = None
        self._lock: asyncio.Lock | None = None
        self.restarts = 0
        self.interrupts = 0   # lints stopped without a restart
        self._dead: list[asyncio.subprocess.Process] = []   # killed, to be reaped by aclose()
        self._current: tuple[str, float] | None = None   # (path, monotonic start) of the lint under way
        self._held: dict[str, tuple[object, int | None]] = {}   # path -> (document key, version) the process holds

    def busy_elsewhere_s(self, path: str) -> float:
        """How long the lint under way, of another path than `path`, has been running (0 when
        idle or linting `path`)."""
        current = self._current
        if current is None or current[0] == path:
            return 0.0
        return time.monotonic() - current[1]

    async def _ensure(self) -> asyncio.subprocess.Process:
        self._dead = [p for p in self._dead if p.returncode is None]
        if self._proc is None or self._proc.returncode is not None:
            if self._proc is not None:
                self.restarts += 1
            self._held.clear()   # a new process holds no document
            self._proc = await start_piped(self.command)
        return self._proc

    def holds(self, path: str) -> tuple[object, int | None] | None:
        """(document key, version) of the text of `path` this worker's process holds, as last sent."""
        return self._held.get(path)

    def kill(self) -> None:
        self._held.clear()
        proc, self._proc = self._proc, None
        if proc is not None:
            self._dead.append(proc)
            if proc.returncode is None:
                try:
                    proc.kill()
                except ProcessLookupError:
                    pass

    async def aclose(self) -> None:
        """Kill the worker and wait for it (so nothing is left for the event loop to clean)."""
        self.kill()
        for proc in self._dead:
            await proc.wait()
        self._dead.clear()

    async def start(self, warm: bool = False) -> None:
        """Start the worker ahead of the first lint (it takes a moment to import); `warm`: and
        lint a small kernel in it, so that its first real lint does not import the rules (half a
        second on a loaded machine: the spare worker's first lint is one that waits for no other)."""
        await self._ensure()
        if warm:
            await self.request(WARM_UP, WARM_UP_PATH, Settings(), 60.0)

    async def lint(self, text: str, path: str, settings: Settings, timeout_s: float) -> tuple[FileResult, list[KernelSpan]]:
        """A full lint of `text`."""
        result, kernels, _ = await self.request(text, path, settings, timeout_s)
        return result, kernels

    async def _interrupted(self, proc: asyncio.subprocess.Process) -> bool:
        """Interrupt the lint under way in `proc` and drop its answer; False when that failed."""
        if INTERRUPT is None or proc.returncode is not None:
            return False

        async def drop_answer() -> bool:
            try:
                proc.send_signal(INTERRUPT)
                while True:   # a first answer, then the answer ("cancelled" or the lint's, had it ended)
                    status, _ = pickle.loads(await _read_frame(proc, INTERRUPT_WAIT_S))
                    if status != FIRST:
                        return True
            except (asyncio.TimeoutError, asyncio.IncompleteReadError, OSError, pickle.UnpicklingError):
                return False

        drain = asyncio.ensure_future(drop_answer())
        while not drain.done():   # a second cancel of the caller must not leave the answer unread
            try:
                await asyncio.shield(drain)
            except asyncio.CancelledError:
                continue
        ok = not drain.cancelled() and drain.result()
        self.interrupts += ok
        return ok

    def _document(self, text: str, path: str, revision: Revision | None) -> tuple:
        """What a request sends of the text: the edits since the version the process holds, when
        it holds one of this document and the change log still has them; else the text."""
        held = self._held.get(path)
        if revision is not None and held is not None and held[0] is revision.key:
            edits = revision.edits_since(held[1])
            if edits is not None:
                return ("edits", tuple(edits), revision.encoding, len(text), text_crc(text))
        return ("text", text)

    async def request(self, text: str, path: str, settings: Settings, timeout_s: float, mode: str = "full",
                      on_first: Callable[[Answer], None] | None = None, revision: Revision | None = None) -> Answer:
        """One request of the wire format above: (result, kernels, exact). `on_first`: called with
        the lint's first answer, when it sends one (mode "incremental"), as soon as it comes.
        `revision`: which version of which open document `text` is: the request then sends the
        edits since the version the process holds, when it holds one."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            proc = None
            self._current = (path, time.monotonic())
            try:
                proc = await self._ensure()
                deadline = time.monotonic() + timeout_s
                document = self._document(text, path, revision)
                while True:
                    proc.stdin.write(_frame((document, path, settings, mode)))
                    self._held[path] = (revision.key, revision.version) if revision is not None else (None, None)
                    await proc.stdin.drain()
                    status, value = pickle.loads(await _read_frame(proc, max(0.0, deadline - time.monotonic())))
                    if status == RESYNC and document[0] == "edits":
                        document = ("text", text)   # the process lost the text, or the edits gave another
                        continue
                    while status == FIRST:
                        if on_first is not None:
                            try:
                                on_first(value)
                            except Exception:   # noqa: S110 - the whole answer follows and is what counts
                                pass
                        status, value = pickle.loads(await _read_frame(proc, max(0.0, deadline - time.monotonic())))
                    break
            except asyncio.TimeoutError:
                self.kill()
                return stopped_result(path, f"Tritonify stopped analysing this file after {timeout_s:g} s "
                                            "(lint.timeoutSeconds); no findings are shown for it")
            except asyncio.CancelledError:
                # the lint is no longer wanted: interrupt it and read its answer, so the next
                # request reads its own; a worker that does not answer soon is started afresh
                if proc is not None and not await self._interrupted(proc):
                    self.kill()
                raise
            except (asyncio.IncompleteReadError, BrokenPipeError, ConnectionResetError, OSError) as exc:
                self.kill()
                return stopped_result(path, f"Tritonify's analysis process died on this file ({type(exc).__name__}); "
                                            "no findings are shown for it")
            finally:
                self._current = None
        if status == "ok":
            return value
        return stopped_result(path, f"internal error while analysing this file: {value}")


if __name__ == "__main__":
    # run the copy imported under its real name, so pickled classes name
    # tritonify.server.lint_worker (not __main__) and the server can read them
    from tritonify.server.lint_worker import serve_worker as _serve

    sys.exit(_serve())
