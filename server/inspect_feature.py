"""Compile-time insight in the editor: registers, spills, shared memory and occupancy of each
kernel and autotune config as code lenses, and CMP-K / CMP-J / CMP-FAIL as diagnostics.

When: only on request (issue 31). Triton's compiler evaluates what a kernel's body says (a call
of a plain Python function, an f-string, a helper's body) while it compiles, so opening a file
never compiles it, in a trusted workspace either: each kernel gets an "Inspect" lens, whose
command `tritonify.inspect [uri]` compiles the document's kernels; from then on each save of that
document compiles it again (never per keystroke: a cold compile takes seconds), until it is
closed. Only in a trusted workspace, while the setting `inspect.enabled` is on, and for documents
of at most INSPECT_MAX_CHARS (larger ones are linted, not compiled). What runs: nothing of the file.
Each kernel is built from its own source text (`mode=SOURCE_ONLY`, tools/compile/
kernel_source.py): its `def`, its jit helpers, literal constants, literal autotune configs; a
kernel that needs more gets a lens "not inspected: needs NAME". How: `inspect_file` in a thread
of this feature's own executor; it compiles in a child process with the user's interpreter
(setting `interpreter`, as Benchmark and Profile) under a timeout, an address-space cap and a
CPU-time cap, and caches by source, config and target, so the event loop keeps answering and a
re-save of unchanged kernels costs nothing.

A result for a version the client no longer has is dropped. The findings are published under
their own source key ("inspect"), next to the lint's, so neither clobbers the other. The command
`tritonify.showAssembly [uri, kernel, variant index, "sass"|"ptx"]` answers
`{"title", "language", "content"}` for a read-only tab (or `{"error"}`).
"""
from __future__ import annotations

import asyncio
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property

from lsprotocol import types

from tritonify.server.analysis import without_bom
from tritonify.server.app import TritonifyServer
from tritonify.server.diagnostics_feature import to_diagnostic
from tritonify.server.documents import lint_path, open_document
from tritonify.server.positions import LineIndex, split_lines
from tritonify.tools.compile.runner import stop_all_workers

SOURCE_KEY = "inspect"
INSPECT = "tritonify.inspect"   # the request: compile the document's kernels now (and on its saves)
SHOW_ASSEMBLY = "tritonify.showAssembly"
# The lens of a kernel the source-only build could not compile: asked for, it compiles the kernel
# running the file's definitions (imports, defs, constant assignments; never its calls or __main__).
COMPILE_WITH_DEFINITIONS = "tritonify.inspectWithDefinitions"
COMPILE_TIMEOUT_S = 120.0
PROBE_TIMEOUT_S = 20.0    # asking an interpreter whether it has triton
# Documents larger than this are linted but not compiled: the 3,000-line test kernels are ~120 KB
# and the largest of the 2,853 files of the real-world corpus is 502 KB (torch/sparse/_triton_ops_meta.py).
INSPECT_MAX_CHARS = 1_000_000
MAX_KERNELS = 32          # kernels compiled per document (the rest get "not inspected: ..."); a cold compile is 1-5 s
FILE_BUDGET_S = 300.0     # no further kernel of a document is started after this long
LISTINGS = ("sass", "ptx")
# VS Code language ids: "ptx" is the PTX extensions' id; "sass" would be the CSS preprocessor's
LANGUAGE = {"sass": "plaintext", "ptx": "ptx"}
UNTRUSTED = ("compile-time insight is off: this workspace is not trusted, and Triton's compiler evaluates "
             "the kernel's code ({hint})")


@dataclass(frozen=True)
class CompileConfig:
    """What a compile depends on besides the text: a change of either means compile again."""

    target: str      # "auto" or a target name such as "sm_90"
    python: str      # the interpreter that runs the compiler


@dataclass
class FileInsight:
    """The compile results of one version of one document."""

    uri: str
    version: int | None
    text: str
    config: CompileConfig
    results: list = field(default_factory=list)   # InspectResult per launchable kernel

    @cached_property
    def lines(self) -> list[str]:
        return split_lines(self.text)

    def result(self, kernel: str):
        return next((r for r in self.results if r.kernel == kernel), None)


CHOOSE_INTERPRETER = "tritonify.chooseInterpreter"   # a client command (the VS Code extension registers it)


def unavailable_reason(results: list, python: str) -> str | None:
    """The Inspect lens's short reason when the interpreter cannot compile: "needs triton in PY"."""
    for result in results:
        error = result.error or {}
        if error.get("kind") == "no-triton" or "No module named 'triton'" in str(error.get("message") or ""):
            return f"needs triton in {python}"
        if error.get("kind") == "no-python":
            return f"cannot start {python}"
    return None


def _no_triton(result, python: str):
    """`result` as a compile that found no triton in `python` (kind "no-triton")."""
    from dataclasses import replace as replaced

    return replaced(result, error={"message": f"{python} cannot import triton: pick the interpreter that has it",
                                   "kind": "no-triton", "line": None, "column": None})


def interpreter_problem(results: list, python: str) -> str | None:
    """One log line when the interpreter cannot compile at all (no triton, does not start)."""
    for result in results:
        error = result.error or {}
        message = str(error.get("message") or "")
        if error.get("kind") == "no-triton" or "No module named 'triton'" in message:
            return (f"compile-time insight is off: {python} cannot import triton "
                    "(set tritonify.interpreter to the Python that has it)")
        if error.get("kind") == "no-python":
            return f"compile-time insight is off: {message} (check tritonify.interpreter)"
    return None


def lens_title(result, variant) -> str:
    from tritonify.diagnostics.compile.render import summary

    return f"{result.target.name} · {summary(variant)}"


def lens_tooltip(result) -> str:
    lines = [f"Compiled for {result.target.name} ({result.target_reason}); click for the SASS."]
    if result.assumptions:
        lines.append("Assumed: " + "; ".join(str(a) for a in result.assumptions))
    return "\n".join(lines)


class InspectFeature:
    def __init__(self, server: TritonifyServer):
        self.server = server
        self.insights: dict[str, FileInsight] = {}        # uri -> the latest results kept
        self._attempted: dict[str, CompileConfig] = {}     # uri -> config of the latest compile asked for
        self._wanted: set[str] = set()                     # uris to compile (again) once their loop is free
        self.asked: set[str] = set()                       # uris the user asked to inspect (INSPECT), until closed
        self._loops: dict[str, asyncio.Task] = {}
        self._published: set[str] = set()                  # uris with inspect diagnostics shown
        self.unavailable: dict[str, str] = {}              # uri -> why its interpreter cannot compile ("needs triton in ...")
        self._targets: dict[str, object] = {}              # setting -> resolved Arch (NVML asked once)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tritonify-inspect")
        self._triton_found: dict[str, bool] = {}           # interpreter -> whether it can import triton

    # ---- when ---------------------------------------------------------------------------
    def config_for(self, uri: str) -> CompileConfig | None:
        """The compile config for `uri`, or None when nothing may be compiled there."""
        settings = self.server.settings_for(uri)
        if not settings.inspect_enabled:
            return None
        if not settings.trusted:
            self.server.log_once(types.MessageType.Info, UNTRUSTED.format(hint=self.server.trust_hint()))
            return None
        return CompileConfig(settings.inspect_target, settings.interpreter[0])

    def on_document_event(self, event: str, uri: str) -> None:
        if event == "saved" and uri in self.asked:   # opening compiles nothing: only a request does
            self.request(uri)
        elif event == "closed":
            self.asked.discard(uri)
            self._wanted.discard(uri)
            self._attempted.pop(uri, None)
            self.insights.pop(uri, None)
            self._published.discard(uri)   # the diagnostics feature cleared every source

    def request(self, uri: str) -> None:
        """Compile the document's current text (now, or as soon as its running compile ends)."""
        doc = open_document(self.server, uri)
        if doc is None or not _is_python(doc):
            return
        if len(doc.source) > INSPECT_MAX_CHARS:
            self.server.log_once(types.MessageType.Info, f"{lint_path(doc)}: not compiled: larger than "
                                 f"{INSPECT_MAX_CHARS // 1_000_000} MB (linted only)")
            self.forget(doc.uri)
            return
        config = self.config_for(doc.uri)
        if config is None:
            self.forget(doc.uri)
            return
        self._attempted[doc.uri] = config
        self._wanted.add(doc.uri)
        loop = self._loops.get(doc.uri)
        if loop is None or loop.done():
            self._loops[doc.uri] = asyncio.ensure_future(self._compile_loop(doc.uri))

    def settings_changed(self) -> None:
        """Compile again where the target or interpreter changed; forget where it is now off."""
        try:
            uris = list(self.server.workspace.text_documents)
        except RuntimeError:
            return
        for uri in uris:
            if uri not in self.asked:
                continue
            config = self.config_for(uri)
            if config is None:
                self.forget(uri)
            elif self._attempted.get(uri) != config:
                self.request(uri)

    def forget(self, uri: str) -> None:
        """Nothing may be compiled for `uri` now: drop its results and what was asked."""
        self.unavailable.pop(uri, None)
        self._wanted.discard(uri)
        self._attempted.pop(uri, None)
        self.clear(uri)

    def clear(self, uri: str) -> None:
        """Drop the results of `uri` and its inspect diagnostics."""
        self.insights.pop(uri, None)
        if uri in self._published:
            self._published.discard(uri)
            doc = open_document(self.server, uri)
            self.server.set_diagnostics(SOURCE_KEY, uri, [], doc.version if doc is not None else None)
            self.server.refresh_code_lenses()

    # ---- compile -------------------------------------------------------------------------
    async def _compile_loop(self, uri: str) -> None:
        try:
            while uri in self._wanted:
                self._wanted.discard(uri)
                await self._compile_once(uri)
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            self.server.log(types.MessageType.Error, f"compile-time insight for {uri} failed: {exc!r}\n{traceback.format_exc()}")
        finally:
            if self._loops.get(uri) is asyncio.current_task():
                self._loops.pop(uri, None)

    async def _compile_once(self, uri: str) -> None:
        server = self.server
        doc = open_document(server, uri)
        config = self.config_for(uri) if doc is not None else None
        if doc is None or config is None:
            return
        version, text, path = doc.version, doc.source, lint_path(doc)
        started = time.monotonic()
        results, problem = await asyncio.get_running_loop().run_in_executor(
            self._executor, self._compile, text, path, config)
        if not server.is_current(uri, version, text) or self.config_for(uri) != config:
            server.log(types.MessageType.Log, f"{path}: compile result of version {version} dropped (stale)")
            return
        if not problem and results and all((r.error or {}).get("kind") == "not-inspected" for r in results):
            # nothing was compiled (each kernel needs more than its source): whether the
            # interpreter has triton decides the lens, as it does where a compile was tried
            if not await asyncio.get_running_loop().run_in_executor(self._executor, self._has_triton, config.python):
                results = [_no_triton(r, config.python) for r in results]
        reason = None if problem else unavailable_reason(results, config.python)
        problem = problem or interpreter_problem(results, config.python)
        if problem:
            server.log_once(types.MessageType.Warning, problem)
            self.clear(uri)   # the same config is not tried again until a save or a settings change
            if reason:        # shown where the lenses would be, with the way out
                self.unavailable[uri] = reason
                server.refresh_code_lenses()
            return
        self.unavailable.pop(uri, None)
        self._publish(FileInsight(uri, version, text, config, results))
        if results:
            cached = sum(1 for r in results if r.cached)
            server.log(types.MessageType.Info, f"{path}: compiled {len(results)} kernel(s) for {results[0].target.name} "
                                               f"({results[0].target_reason}) in {time.monotonic() - started:.1f} s"
                                               + (f", {cached} from the cache" if cached else ""))

    def _compile(self, text: str, path: str, config: CompileConfig) -> tuple[list, str | None]:
        """In the executor's thread: (results, problem). Blocks for seconds on a cache miss."""
        from tritonify.diagnostics.compile.result import InspectError
        from tritonify.tools.compile.service import SOURCE_ONLY, inspect_file, resolve_target

        try:
            arch = self._targets.get(config.target)
            if arch is None:
                arch, _ = resolve_target(config.target)
                self._targets[config.target] = arch
        except InspectError as exc:
            return [], f"compile-time insight is off: {exc}"
        text = without_bom(text)   # as the lint reads it (a BOM is not Python)
        return inspect_file(text, path, target=arch, python=config.python, trusted=True, mode=SOURCE_ONLY,
                            timeout=COMPILE_TIMEOUT_S, max_kernels=MAX_KERNELS, budget_s=FILE_BUDGET_S), None

    def _has_triton(self, python: str) -> bool:
        """Whether `python` can import triton (asked once per interpreter, isolated from the
        workspace: `-I`, run in a temporary folder; nothing of triton is imported, only found)."""
        known = self._triton_found.get(python)
        if known is None:
            import tempfile

            from tritonify.infra.child_process import OK, run_process

            with tempfile.TemporaryDirectory(prefix="tritonify-probe-") as tmp:
                outcome = run_process([python, "-I", "-c", "import importlib.util, sys; "
                                       "sys.exit(importlib.util.find_spec('triton') is None)"],
                                      what="the triton probe", cwd=tmp, timeout_s=PROBE_TIMEOUT_S, kill_grace_s=0)
            known = outcome.status == OK
            self._triton_found[python] = known
        return known

    def findings_for(self, uri: str, text: str) -> list:
        """The compile-time findings of the document as it is now (none when the text has moved
        on since the compile: their fixes would edit the wrong lines)."""
        from tritonify.diagnostics.compile.findings import inspect_findings

        insight = self.insights.get(uri)
        if insight is None or insight.text != text:
            return []
        return [f for result in insight.results for f in inspect_findings(result)]

    def _publish(self, insight: FileInsight) -> None:
        from tritonify.diagnostics.compile.findings import inspect_findings

        self.insights[insight.uri] = insight
        index = LineIndex(insight.text, self.server.position_encoding)
        diagnostics = [to_diagnostic(f, index) for result in insight.results for f in inspect_findings(result)]
        if diagnostics or insight.uri in self._published:
            self.server.set_diagnostics(SOURCE_KEY, insight.uri, diagnostics, insight.version)
        if diagnostics:
            self._published.add(insight.uri)
        else:
            self._published.discard(insight.uri)
        self.server.refresh_code_lenses()

    # ---- what the editor shows -------------------------------------------------------------
    def code_lenses(self, uri: str, index: LineIndex, kernels=()) -> list[types.CodeLens]:
        """A lens per kernel / autotune config of the latest result, on lines that still read as
        they did when compiled (`index` is the document's current text); when the interpreter
        cannot compile, one per kernel (`kernels`: the analysis's KernelSpans) saying why, whose
        click chooses another interpreter."""
        insight = self.insights.get(uri)
        if insight is None:
            reason = self.unavailable.get(uri)
            if reason is None:
                if not kernels or not self.may_inspect(uri):
                    return []
                return [_lens(index, k.first_line, 0, "Inspect", INSPECT, [uri],
                              "Compile this file's kernels with Triton's compiler (in a child process) for their "
                              "registers, spills, shared memory and occupancy; Triton's compiler evaluates the "
                              "code inside the kernels and their helpers")
                        for k in kernels]
            return [_lens(index, k.first_line, 0, f"Inspect: {reason}", CHOOSE_INTERPRETER, [uri],
                          "Compile-time insight needs an interpreter with triton: click to choose one")
                    for k in kernels]
        lenses = []
        for result in insight.results:
            if result.error:
                if _unchanged(insight.lines, index, result.kernel_line):
                    message = str(result.error.get("message") or "failed").splitlines()[0]
                    if result.error.get("kind") != "not-inspected":
                        message = f"not compiled: {message}"
                    elif "needs" in message:   # the user may ask for the compile that runs the definitions
                        lenses.append(_lens(index, result.kernel_line, 0, f"{result.target.name} · {message[:120]}",
                                            COMPILE_WITH_DEFINITIONS, [uri, result.kernel],
                                            "Click to compile it running the file's imports and definitions "
                                            "(not its calls or __main__ block), in a child process"))
                        continue
                    lenses.append(_lens(index, result.kernel_line, 0, f"{result.target.name} · {message[:120]}"))
                continue
            for i, variant in enumerate(result.variants):
                pos = variant.position
                if not _unchanged(insight.lines, index, pos.line):
                    continue
                if variant.error:
                    lenses.append(_lens(index, pos.line, pos.column, lens_title(result, variant)))
                    continue
                tooltip = lens_tooltip(result)
                for kind in LISTINGS:
                    title = lens_title(result, variant) if kind == "sass" else "PTX"
                    lenses.append(_lens(index, pos.line, pos.column, title, SHOW_ASSEMBLY,
                                        [uri, result.kernel, i, kind], tooltip))
        return lenses

    def may_inspect(self, uri: str) -> bool:
        """Whether an Inspect request for `uri` could compile (trusted, enabled, not too large)."""
        doc = open_document(self.server, uri)
        if doc is None or not _is_python(doc) or len(doc.source) > INSPECT_MAX_CHARS:
            return False
        return self.config_for(uri) is not None   # says once why, where untrusted

    async def inspect_on_request(self, args: tuple) -> dict:
        """INSPECT [uri]: compile the document's kernels now, and again on each of its saves."""
        if not args or not isinstance(args[0], str):
            return {"ok": False, "error": f"{INSPECT} takes the document URI"}
        doc = open_document(self.server, args[0])
        if doc is None:
            return {"ok": False, "error": f"{args[0]} is not open"}
        settings = self.server.settings_for(doc.uri)
        if not settings.trusted:
            return {"ok": False, "error": "not compiled: " + UNTRUSTED.format(hint=self.server.trust_hint())}
        if not settings.inspect_enabled:
            return {"ok": False, "error": "not compiled: compile-time insight is off (the setting inspect.enabled)"}
        if len(doc.source) > INSPECT_MAX_CHARS:
            return {"ok": False, "error": f"not compiled: larger than {INSPECT_MAX_CHARS // 1_000_000} MB (linted only)"}
        self.asked.add(doc.uri)
        version = doc.version
        self.request(doc.uri)
        loop = self._loops.get(doc.uri)
        if loop is not None:
            await asyncio.shield(loop)
        insight = self.insights.get(doc.uri)
        now = open_document(self.server, doc.uri)
        if insight is None and now is not None and now.version != version:
            return {"ok": False, "error": "the document changed while it was compiled; it is compiled again when saved",
                    "actions": ["openLog"]}
        if insight is None:
            reason = self.unavailable.get(doc.uri)
            if reason:   # the interpreter's problem (no triton, does not start): the way out offered
                return {"ok": False, "error": f"not compiled: {reason}", "actions": ["chooseInterpreter", "openLog"]}
            return {"ok": False, "error": "nothing was compiled (see the log)", "actions": ["openLog"]}
        failed = [r.kernel for r in insight.results if r.error]
        message = f"compiled {len(insight.results) - len(failed)} of {len(insight.results)} kernel(s)"
        return {"ok": True, "message": message + (f" ({', '.join(failed)} not: see the lens)" if failed else "")}

    async def show_assembly(self, args: tuple) -> dict:
        from tritonify.diagnostics.compile.result import InspectError, assembly_view

        usage = f"{SHOW_ASSEMBLY} takes the document URI, the kernel name, the variant index and \"sass\" or \"ptx\""
        if len(args) < 3:
            return {"error": usage}
        uri, kernel, variant = args[0], args[1], args[2]
        kind = args[3] if len(args) > 3 else "sass"
        if (not isinstance(uri, str) or not isinstance(kernel, str) or isinstance(variant, bool)
                or not isinstance(variant, int) or variant < 0 or kind not in LISTINGS):
            return {"error": usage}
        insight = self.insights.get(uri)
        result = insight.result(kernel) if insight is not None else None
        if result is None:
            return {"error": f"no compiled {kernel} in {uri}: click its Inspect lens first (a trusted workspace "
                             "with tritonify.inspect.enabled on)"}
        try:
            view = await asyncio.get_running_loop().run_in_executor(None, assembly_view, result, kind, variant)
        except InspectError as exc:
            return {"error": f"{kernel}: {exc}"}
        return {"title": view.title, "language": LANGUAGE[kind], "content": view.text,
                "kind": kind, "kernel": kernel, "variant": variant}

    async def compile_with_definitions(self, args: tuple) -> dict:
        """The command of a "not inspected: needs ..." lens: compile that kernel running the file's
        definitions (worker.load_definitions), because the user asked, in a trusted workspace only."""
        from tritonify.diagnostics.compile.result import InspectError
        from tritonify.tools.compile.service import DEFINITIONS, inspect_kernel

        if len(args) < 2 or not isinstance(args[0], str) or not isinstance(args[1], str):
            return {"ok": False, "error": f"{COMPILE_WITH_DEFINITIONS} takes the document URI and the kernel name"}
        uri, kernel = args[0], args[1]
        doc = open_document(self.server, uri)
        if doc is None:
            return {"ok": False, "error": f"{uri} is not open"}
        if not self.server.settings_for(uri).trusted:
            return {"ok": False, "error": f"not compiled: this workspace is not trusted, and this compile runs the "
                                          f"file's imports and definitions ({self.server.trust_hint()})"}
        config = self.config_for(uri)
        insight = self.insights.get(doc.uri)
        if config is None or insight is None or insight.text != doc.source or insight.result(kernel) is None:
            return {"ok": False, "error": f"{kernel} has no compile result for the document as it is now: save it first"}
        path = lint_path(doc)

        def run():
            try:
                return inspect_kernel(without_bom(insight.text), path, kernel, target=self._targets.get(config.target),
                                      python=config.python, trusted=True, mode=DEFINITIONS, timeout=COMPILE_TIMEOUT_S)
            except InspectError as exc:
                return str(exc)

        result = await asyncio.get_running_loop().run_in_executor(self._executor, run)
        if isinstance(result, str):
            return {"ok": False, "error": result, "actions": ["openLog"]}
        problem = interpreter_problem([result], config.python)
        if problem:   # the interpreter's problem, not the kernel's: no finding on it, the way out offered
            self.clear(doc.uri)
            self.unavailable[doc.uri] = unavailable_reason([result], config.python) or problem
            self.server.refresh_code_lenses()
            return {"ok": False, "error": problem, "actions": ["chooseInterpreter", "openLog"]}
        if self.insights.get(doc.uri) is not insight:
            return {"ok": False, "error": "the document changed meanwhile; the result was dropped"}
        insight.results = [result if r.kernel == kernel else r for r in insight.results]
        self._publish(insight)
        message = (result.error or {}).get("message") or f"{kernel} compiled running the file's definitions"
        return {"ok": result.error is None, "message": str(message)}

    def stop(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        stop_all_workers()        # a compile still running would otherwise run on to its timeout


def _is_python(doc) -> bool:
    path = lint_path(doc)
    return bool(path and path.endswith((".py", ".pyi")))


def _unchanged(compiled_lines: list[str], index: LineIndex, line: int) -> bool:
    """Whether 1-based `line` reads the same now as in the compiled text (else a lens would be
    placed on the wrong code; it comes back at the next save)."""
    return 1 <= line <= len(compiled_lines) and index.line_text(line) == compiled_lines[line - 1]


def _lens(index: LineIndex, line: int, column: int, title: str, command: str = "", arguments=None,
          tooltip: str | None = None) -> types.CodeLens:
    """A lens at (1-based line, column); an empty command makes a label that does nothing."""
    pos = index.position(line, column)
    return types.CodeLens(range=types.Range(start=pos, end=pos), command=types.Command(
        title=title, command=command, arguments=arguments, tooltip=tooltip))


def register(server: TritonifyServer) -> InspectFeature:
    feature = InspectFeature(server)
    server.add_feature(feature)
    server.on_document_event.append(feature.on_document_event)
    server.on_settings_changed.append(feature.settings_changed)
    server.on_shutdown.append(feature.stop)

    def command(name: str, handler, failed: dict) -> None:
        """Register `handler` for `name`; a failure inside it is logged and answered as `failed` with the error."""
        @server.command(name)
        async def run(*args):
            try:
                return await handler(args)
            except Exception as exc:
                server.log(types.MessageType.Error, f"{name} failed: {exc!r}\n{traceback.format_exc()}")
                return {**failed, "error": f"{name} failed inside the server: {type(exc).__name__}: {exc}"}

    command(INSPECT, feature.inspect_on_request, {"ok": False})
    command(SHOW_ASSEMBLY, feature.show_assembly, {})
    command(COMPILE_WITH_DEFINITIONS, feature.compile_with_definitions, {"ok": False})

    return feature
