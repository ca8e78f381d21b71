"""The editor's settings for Tritonify, typed, and the lint settings of each document.

Where settings come from, later wins:
1. the defaults below;
2. `initializationOptions` (any client: Neovim's `init_options`, Helix's `config`), either
   flat or under a `tritonify` key;
3. `workspace/configuration`, section `tritonify`, globally and per workspace folder (but not
   `trusted: true`, see below);
and for linting, the `[tool.tritonify]` table of the nearest `pyproject.toml` of each
document is read first, then the editor's select / ignore / severity override it (ruff's order).

Editor shape (camelCase as VS Code settings are written):

    {"lint": {"run": "onType" | "onSave", "select": [...], "ignore": [...],
              "severity": {"TRI001": "error"}, "timeoutSeconds": 60},
     "interpreter": "/path/to/python" | ["/path/to/python", "-X", "dev"],
     "trusted": false,
     "jobs": {"timeoutSeconds": 600},
     "benchmark": {"baselines": "eager,compile,liger", "shapes": "4096x4096,16384x4096", "timeout": 0},
     "inspect": {"enabled": true, "target": "auto" | "sm_80" | "sm_90" | "sm_100" | "sm_120" | ...}}

`benchmark.*` become `tritonify bench`'s `--baselines`, `--shapes` and `--timeout`: baselines are
names (empty: eager, compile, liger and the contract's own), shapes are checked with the parser
`bench --shapes` uses (empty: the contract's), timeout 0 is bench's own default.

`trusted` is false unless the client says true in `initializationOptions`: Benchmark, Profile and
compile-time insight run only then. A `workspace/configuration` answer or pushed settings may
withdraw trust but never grant it (a workspace settings file, `.helix/languages.toml` or a
project-local Neovim config, would otherwise trust itself; app.apply_settings). The VS Code extension sends its workspace trust (it has no `tritonify.trusted`
setting); any other client sets `trusted` in the settings it starts the server with, in the
user's own configuration (docs/editors.md, "Trust"). A client that does not state it gets false.
`trust_hint` says what to do in those words, for the client at hand.

`inspect.enabled` defaults to true unless the environment variable TRITONIFY_INSPECT is "0"
(a headless client or a test suite that wants no compiles without saying so in every session).
"""
from __future__ import annotations

import logging
import os
import re
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tritonify.diagnostics.settings import Settings, SettingsError, load_settings

log = logging.getLogger(__name__)

RUN_ON_TYPE = "onType"
RUN_ON_SAVE = "onSave"
PYPROJECT_TTL_S = 2.0   # how long a folder's [tool.tritonify] is trusted before it is read again
INSPECT_AUTO = "auto"
DEFAULT_BASELINES: tuple[str, ...] = ()   # bench's own default: every baseline, the contract's included
_BASELINE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def trust_hint(client_states_trust: bool) -> str:
    """What makes a workspace trusted, for a client that sends its own workspace trust (the VS
    Code extension: initializationOptions.client.statesWorkspaceTrust) or for any other client."""
    if client_states_trust:
        return "trust the workspace: Manage Workspace Trust"
    return ("set \"trusted\": true in the settings your editor starts this server with, in your user configuration "
            "(Neovim: init_options; Helix: [language-server.tritonify.config]; docs/editors.md, \"Trust\")")


def inspect_enabled_default() -> bool:
    """Compile-time insight is on unless TRITONIFY_INSPECT says "0", "false" or "off"."""
    return os.environ.get("TRITONIFY_INSPECT", "").strip().lower() not in ("0", "false", "off", "no")


@dataclass(frozen=True)
class EditorSettings:
    lint_run: str = RUN_ON_TYPE
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: dict = field(default_factory=dict)
    interpreter: tuple[str, ...] = (sys.executable,)
    trusted: bool = False    # a client that does not state trust runs nothing of the workspace
    job_timeout_s: float = 600.0
    lint_timeout_s: float = 60.0
    inspect_enabled: bool = field(default_factory=inspect_enabled_default)
    inspect_target: str = INSPECT_AUTO
    bench_baselines: tuple[str, ...] = DEFAULT_BASELINES   # () = bench's own default (all)
    bench_shapes: str = ""                                  # "" = the contract's shapes
    bench_timeout_s: float | None = None                    # None = bench's own default
    problems: tuple[str, ...] = ()   # what was wrong with the values given, for the log

    def updated(self, raw: Any) -> "EditorSettings":
        """These settings with the values of a client's settings object applied; wrong
        values are skipped and described in `problems` (a setting never stops the server)."""
        if not isinstance(raw, dict):
            return self
        if isinstance(raw.get("tritonify"), dict):
            raw = raw["tritonify"]
        changes: dict[str, Any] = {}
        problems: list[str] = []
        lint = raw.get("lint", {})
        if not isinstance(lint, dict):
            problems.append("lint must be an object")
            lint = {}
        run = lint.get("run")
        if run is not None:
            if run in (RUN_ON_TYPE, RUN_ON_SAVE):
                changes["lint_run"] = run
            else:
                problems.append(f"lint.run must be {RUN_ON_TYPE!r} or {RUN_ON_SAVE!r}, not {run!r}")
        for key in ("select", "ignore"):
            value = lint.get(key)
            if value is None:
                continue
            codes = _codes(value)
            if codes is None:
                problems.append(f"lint.{key} must be a list of codes")
            else:
                changes[key] = codes
        lint_timeout = lint.get("timeoutSeconds")
        if lint_timeout is not None:
            if isinstance(lint_timeout, (int, float)) and not isinstance(lint_timeout, bool) and lint_timeout > 0:
                changes["lint_timeout_s"] = float(lint_timeout)
            else:
                problems.append("lint.timeoutSeconds must be a positive number")
        severity = lint.get("severity")
        if severity is not None:
            if isinstance(severity, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in severity.items()):
                changes["severity"] = dict(severity)
            else:
                problems.append("lint.severity must map codes to error, warning, info or hint")
        interpreter = raw.get("interpreter")
        if interpreter is not None:
            if isinstance(interpreter, str) and interpreter.strip():
                changes["interpreter"] = (interpreter,)
            elif isinstance(interpreter, list) and interpreter and all(isinstance(a, str) and a for a in interpreter):
                changes["interpreter"] = tuple(interpreter)
            elif interpreter in ("", []):
                pass  # empty means "the default"
            else:
                problems.append("interpreter must be a path or a list of strings")
        trusted = raw.get("trusted")
        if trusted is not None:
            if isinstance(trusted, bool):
                changes["trusted"] = trusted
            else:
                problems.append("trusted must be true or false")
        jobs = raw.get("jobs", {})
        timeout = jobs.get("timeoutSeconds") if isinstance(jobs, dict) else None
        if timeout is not None:
            if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
                changes["job_timeout_s"] = float(timeout)
            else:
                problems.append("jobs.timeoutSeconds must be a positive number")
        _inspect_changes(raw.get("inspect"), changes, problems)
        _benchmark_changes(raw.get("benchmark"), changes, problems)
        changes["problems"] = self.problems + tuple(problems)
        return replace(self, **changes)


def _inspect_changes(inspect: Any, changes: dict[str, Any], problems: list[str]) -> None:
    """`inspect.enabled` and `inspect.target` (any target the compile package knows, or "auto")."""
    if inspect is None:
        return
    if not isinstance(inspect, dict):
        problems.append("inspect must be an object")
        return
    enabled = inspect.get("enabled")
    if enabled is not None:
        if isinstance(enabled, bool):
            changes["inspect_enabled"] = enabled
        else:
            problems.append("inspect.enabled must be true or false")
    target = inspect.get("target")
    if target is None:
        return
    if not isinstance(target, str):
        problems.append('inspect.target must be "auto" or a target such as "sm_90"')
    elif target.strip().lower() in ("", INSPECT_AUTO):
        changes["inspect_target"] = INSPECT_AUTO
    else:
        from tritonify.diagnostics.compile.targets import TargetError, parse_target

        try:
            changes["inspect_target"] = parse_target(target).name
        except TargetError as exc:
            problems.append(f"inspect.target: {exc}")


def _benchmark_changes(bench: Any, changes: dict[str, Any], problems: list[str]) -> None:
    """`benchmark.baselines`, `benchmark.shapes` and `benchmark.timeout`, checked here so a bad value
    is reported once in the log instead of failing every Benchmark (and never reaches the argv)."""
    if bench is None:
        return
    if not isinstance(bench, dict):
        problems.append("benchmark must be an object")
        return
    baselines = bench.get("baselines")
    if baselines is not None:
        names = baselines.split(",") if isinstance(baselines, str) else baselines
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            names = [n.strip() for n in names if n.strip()]
            bad = [n for n in names if not _BASELINE_NAME.match(n)]
            if bad:
                problems.append(f"benchmark.baselines: {', '.join(map(repr, bad))} is not a baseline name")
            else:
                changes["bench_baselines"] = tuple(names)
        else:
            problems.append('benchmark.baselines must be names separated by commas, e.g. "eager,compile,liger"')
    shapes = bench.get("shapes")
    if shapes is not None:
        from tritonify.kernels.bench.shapes import parse_shapes

        if not isinstance(shapes, str):
            problems.append("benchmark.shapes: write shapes as a string, e.g. 4096x4096,16384x4096")
        else:
            try:
                parsed = parse_shapes(shapes) or []
                changes["bench_shapes"] = ",".join("x".join(str(d) for d in dims) for dims in parsed)
            except ValueError as exc:
                problems.append(f"benchmark.shapes: {exc}")
    timeout = bench.get("timeout")
    if timeout is not None:
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout >= 0:
            changes["bench_timeout_s"] = float(timeout) or None
        else:
            problems.append("benchmark.timeout must be a number of seconds (0: bench's own default)")


def _codes(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return tuple(v.strip().upper() for v in value if v.strip())


def claims_trust(raw: Any) -> bool:
    """Whether a settings object says `"trusted": true` (flat or under `tritonify`)."""
    if isinstance(raw, dict) and isinstance(raw.get("tritonify"), dict):
        raw = raw["tritonify"]
    return isinstance(raw, dict) and raw.get("trusted") is True


def withdraw_only(settings: EditorSettings, granted: bool) -> EditorSettings:
    """`settings` with trust no higher than what the client granted at initialization: settings
    that come later (`workspace/configuration`, pushed ones) may come from the workspace itself."""
    return settings if granted or not settings.trusted else replace(settings, trusted=False)


@dataclass(frozen=True)
class ConfigProblem:
    """A `[tool.tritonify]` value the server could not use: the file, the key, what was wrong."""

    path: Path | None       # the pyproject.toml
    key: str | None         # the top-level key of [tool.tritonify] it was dropped from
    message: str            # the loader's words: "<file>: [tool.tritonify] <key>: expected ..."
    line: int | None = None   # 1-based, where the loader knows it (a TOML syntax error); else the key's line


def load_lint_settings(folder: Path) -> tuple[Settings, list[ConfigProblem]]:
    """The `[tool.tritonify]` settings for files in `folder`, keeping every good key: a key
    whose value the loader refuses (settings.from_table / check_codes name it first in their
    message) is dropped and reported, and the table is read again without it; its default applies.
    A pyproject.toml that cannot be read as TOML at all (a syntax error, tables nested too deeply,
    not a regular file) gives the defaults and one problem on the line the parser names: linting
    goes on (issue 31: the folder was no longer linted, with no diagnostic)."""
    from tritonify.diagnostics.settings import check_codes, find_pyproject, from_table, read_toml

    try:
        return load_settings(folder), []
    except SettingsError as exc:
        first = exc
    except (ValueError, OSError, KeyError, TypeError, RecursionError) as exc:
        first = SettingsError(f"{type(exc).__name__}: {exc}")
    try:
        pyproject = find_pyproject(folder)
        table = read_toml(pyproject)["tool"]["tritonify"] if pyproject is not None else None
    except SettingsError as exc:   # ours, but not TOML
        return Settings(), [ConfigProblem(exc.path, None, f"{exc}; linting with the defaults", exc.line)]
    except (KeyError, TypeError):
        table = None
    if not isinstance(table, dict):
        return Settings(), [ConfigProblem(pyproject, None, f"ignoring [tool.tritonify] near {folder}: {first}", first.line)]
    table = dict(table)
    problems: list[ConfigProblem] = []
    for _ in range(len(table) + 1):
        try:
            settings = from_table(table, root=pyproject.parent)
            check_codes(settings)
            return settings, problems
        except SettingsError as exc:
            text = str(exc)
            bad = _keys_named(text, table)
            problems.append(ConfigProblem(pyproject, bad[0] if bad else None,
                                          f"{pyproject}: [tool.tritonify] {text}"
                                          + (f"; using the default for {', '.join(bad)}" if bad else "")))
            if not bad:
                break
            for key in bad:
                table.pop(key, None)
    return Settings(root=pyproject.parent), problems


def _keys_named(message: str, table: dict) -> list[str]:
    """The top-level keys a loader message is about: "select: ...", "per-file-ignores.'x': ...",
    "unknown key(s): a, b"."""
    if message.startswith("unknown key(s): "):
        return [k.strip() for k in message[len("unknown key(s): "):].split(",") if k.strip() in table]
    head = message.split(":", 1)[0].split(".", 1)[0].strip()
    return [head] if head in table else []


class LintSettingsCache:
    """`[tool.tritonify]` per folder, read again when older than a couple of seconds (so an
    edited pyproject.toml takes effect without restarting the server)."""

    def __init__(self):
        self._cache: dict[Path, tuple[float, Settings, list[ConfigProblem]]] = {}

    def clear(self) -> None:
        self._cache.clear()

    def for_folder(self, folder: Path) -> tuple[Settings, list[ConfigProblem]]:
        """(settings, problems) for files in `folder`; problems describe a broken pyproject."""
        now = time.monotonic()
        hit = self._cache.get(folder)
        if hit and now - hit[0] < PYPROJECT_TTL_S:
            return hit[1], hit[2]
        try:
            settings, problems = load_lint_settings(folder) if folder.is_dir() else (Settings(), [])
        except Exception as exc:   # noqa: BLE001 - a configuration never stops the lint: the defaults
            log.exception("reading the settings near %s failed", folder)
            settings, problems = Settings(), [ConfigProblem(None, None, f"ignoring [tool.tritonify] near {folder}: "
                                                                         f"{type(exc).__name__}: {exc}")]
        self._cache[folder] = (now, settings, problems)
        return settings, problems


def lint_settings(base: Settings, editor: EditorSettings) -> tuple[Settings, str | None]:
    """`base` ([tool.tritonify]) overridden by the editor's select / ignore / severity."""
    try:
        return base.merged(select=list(editor.select), ignore=list(editor.ignore), severity=editor.severity), None
    except (SettingsError, ValueError) as exc:
        return base, f"ignoring the editor's lint settings: {exc}"


def config_diagnostics(folder: Path, problems: list[ConfigProblem], published: dict[str, tuple[str, ...]]) -> dict:
    """{pyproject URI: [Diagnostic]} to publish: the problems on their keys' lines, and an empty
    list for a pyproject shown with problems before that now reads cleanly. Only changes."""
    from lsprotocol import types

    out: dict[str, list] = {}
    for problem in problems:
        if problem.path is None:
            continue
        line = problem.line - 1 if problem.line else _key_line(problem.path, problem.key)
        out.setdefault(problem.path.resolve().as_uri(), []).append(types.Diagnostic(
            range=types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line + 1, character=0)),
            message=problem.message, severity=types.DiagnosticSeverity.Warning, source="tritonify", code="config"))
    if not problems and published:
        from tritonify.diagnostics.settings import find_pyproject

        found = find_pyproject(folder)
        uri = found.resolve().as_uri() if found is not None else None
        if uri in published:
            out[uri] = []
    return {uri: diags for uri, diags in out.items()
            if tuple(d.message for d in diags) != published.get(uri, ())}


def _key_line(path: Path, key: str | None) -> int:
    """0-based line of `key = ...` in the [tool.tritonify] table of `path` (else of the table's
    header, else 0)."""
    from tritonify.diagnostics.settings import PYPROJECT_MAX_BYTES
    from tritonify.infra.bounded_read import read_text

    try:
        lines = re.split(r"\r\n|\r|\n", read_text(path, PYPROJECT_MAX_BYTES))   # LSP's line breaks only
    except (OSError, UnicodeDecodeError):
        return 0
    header = next((i for i, line in enumerate(lines) if re.match(r"\s*\[\s*tool\s*\.\s*tritonify\s*[\].]", line)), None)
    if header is None:
        return 0
    if key:
        pattern = re.compile(rf"\s*[\"']?{re.escape(key)}[\"']?\s*=|\s*\[\s*tool\s*\.\s*tritonify\s*\.\s*[\"']?{re.escape(key)}\b")
        for i in range(header, len(lines)):
            if pattern.match(lines[i]):
                return i
    return header
