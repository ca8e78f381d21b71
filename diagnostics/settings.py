"""Lint settings: select/ignore codes and prefixes, severity overrides, excludes.

Read from `[tool.tritonify]` in the nearest `pyproject.toml` (ruff's model) and overridden by
the command line or the editor's settings.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from tritonify.diagnostics.model import Severity

DEFAULT_EXCLUDE = [".git/", ".hg/", ".venv/", "venv/", "node_modules/", "__pycache__/", "build/", "dist/", ".tox/", ".eggs/"]
MAX_FILE_BYTES = 10 * 1024 * 1024


PYPROJECT_MAX_BYTES = 1_000_000   # a pyproject.toml larger than this is not read (nor one that is a FIFO or /proc file)


class SettingsError(ValueError):
    """A configuration Tritonify cannot use; `path` and `line` (1-based) say where, when known."""

    def __init__(self, message: str, *, path: Path | None = None, line: int | None = None):
        super().__init__(message)
        self.path = path
        self.line = line


def read_toml(path: Path) -> dict:
    """`path` parsed as TOML, or a SettingsError that names the file and, where it can, the line:
    not TOML, nested too deeply for the parser (a RecursionError inside tomllib), too large, or
    not a regular file (read with a bound, never blocking: infra.bounded_read)."""
    from tritonify.infra.bounded_read import read_text

    try:
        raw = read_text(path, PYPROJECT_MAX_BYTES)
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path}: not valid UTF-8 ({exc.reason})", path=path) from None
    except OSError as exc:
        raise SettingsError(f"{path}: not read: {exc}", path=path) from None
    return parse_toml(raw, path)


def parse_toml(raw: str, path: Path) -> dict:
    try:
        return tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML ({exc})", path=path, line=_toml_error_line(exc, raw)) from None
    except RecursionError:
        raise SettingsError(f"{path}: not valid TOML (tables or arrays nested too deeply to read)", path=path,
                            line=_deepest_line(raw)) from None


def _toml_error_line(exc: Exception, raw: str) -> int | None:
    """The 1-based line of a TOMLDecodeError ("... (at line 3, column 5)", "(at end of document)")."""
    lineno = getattr(exc, "lineno", None)   # Python 3.14
    if isinstance(lineno, int):
        return lineno
    import re

    match = re.search(r"at line (\d+)", str(exc))
    if match:
        return int(match.group(1))
    if "end of document" in str(exc):
        return max(1, raw.count("\n") + (0 if raw.endswith("\n") else 1))
    return None


def _deepest_line(raw: str, depth_limit: int = 100) -> int | None:
    """The first line where brackets nest deeper than `depth_limit` (strings are not told apart:
    this only places a diagnostic)."""
    depth = 0
    for number, line in enumerate(raw.splitlines(), 1):
        for ch in line:
            if ch in "[{":
                depth += 1
                if depth > depth_limit:
                    return number
            elif ch in "]}":
                depth -= 1
    return None


def _opt_in() -> frozenset[str]:
    from tritonify.diagnostics.registry import opt_in_codes

    return opt_in_codes()


@dataclass(frozen=True)
class Settings:
    # () = the default rule set. "ALL" selects every rule; a rule outside the default set
    # (`Rule.default = False`) runs only when its own code or "ALL" is selected, never through a
    # prefix such as "TRI" (ruff's model).
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    severity: dict = field(default_factory=dict)     # code or prefix -> Severity
    exclude: tuple[str, ...] = ()
    per_file_ignores: dict = field(default_factory=dict)  # glob -> codes
    max_file_bytes: int = MAX_FILE_BYTES
    root: Path | None = None                           # folder of the pyproject that set these
    target: str = "auto"                               # hardware where detection finds none (diagnostics/target.py)
    # The Liger-first policy (TRI003): a kernel that re-implements an op Liger-Kernel ships is
    # reported; `liger-first = false` in [tool.tritonify] turns that advice off for the project.
    liger_first: bool = True
    # The Triton the project runs (a version, "3.6", or a specifier, ">=3.4,<3.9"): what the
    # compile-break rules judge API names against (diagnostics/triton_api/target.py); "" = read
    # it from the project's requirements.
    triton_version: str = ""

    def enabled(self, code: str, path: str | None = None) -> bool:
        code = code.upper()
        selectors = self.select + self.extend_select
        if code in _opt_in():
            selected = max((_match_len(code, s) for s in selectors
                            if s.strip().upper() in ("ALL", code)), default=-1)
        else:
            selected = _best_match(code, selectors)
            if not self.select:
                selected = max(selected, 0)     # the default set
        ignored = _best_match(code, self.ignore)
        if path and self.per_file_ignores:
            rel = _relative(path, self.root)
            for pattern, codes in self.per_file_ignores.items():
                if _glob_match(rel, pattern):
                    m = _best_match(code, tuple(codes))
                    if m > ignored:
                        ignored = m
        if selected < 0:
            return False
        return not (ignored >= 0 and ignored >= selected)

    def severity_for(self, code: str, default: Severity) -> Severity:
        best, sev = -1, default
        for key, value in self.severity.items():
            n = _match_len(code.upper(), key.upper())
            if n > best:
                best, sev = n, value
        return sev

    def merged(self, **overrides) -> "Settings":
        clean = {k: v for k, v in overrides.items() if v not in (None, (), [], {})}
        for key in ("select", "ignore", "extend_select", "exclude"):
            if key in clean:
                clean[key] = tuple(_codes(clean[key]) if key != "exclude" else clean[key])
        if "severity" in clean:
            clean["severity"] = {**self.severity, **_severities(clean["severity"])}
        return replace(self, **clean)


def _match_len(code: str, selector: str) -> int:
    selector = selector.strip().upper()
    if selector == "ALL":
        return 0
    if code.startswith(selector):
        return len(selector)
    return -1


def _best_match(code: str, selectors: tuple[str, ...]) -> int:
    return max((_match_len(code, s) for s in selectors), default=-1)


def _codes(value, key: str = "select") -> list[str]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"{key}: expected a list of rule codes (strings), got {_describe(value)}")
    return [v.strip().upper() for v in value if v and v.strip()]


def _severities(value, key: str = "severity") -> dict:
    if not isinstance(value, dict):
        raise SettingsError(f"{key}: expected a table of code = severity, got {_describe(value)}")
    out = {}
    for code, sev in (value or {}).items():
        if not isinstance(sev, (str, Severity)):
            raise SettingsError(f"{key}.{code}: expected a severity string (error, warning, info or hint), got {_describe(sev)}")
        try:
            out[code.upper()] = sev if isinstance(sev, Severity) else Severity.parse(str(sev))
        except ValueError as exc:
            raise SettingsError(f"unknown severity {sev!r} for {code} (use error, warning, info or hint)") from exc
    return out


def _describe(value) -> str:
    """A value's TOML type and (short) text, for a message."""
    kinds = {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array",
             tuple: "an array", dict: "a table"}
    text = repr(value)
    return f"{kinds.get(type(value), type(value).__name__)} ({text if len(text) <= 40 else text[:37] + '...'})"


# ---- rule codes named in settings -------------------------------------------------------------

@lru_cache(maxsize=1)
def known_codes() -> tuple[str, ...]:
    """Every code a selector can name: the registered rules and TRI000 (the file itself)."""
    from tritonify.diagnostics.registry import all_rules

    return tuple(sorted({"TRI000", *(r.code for r in all_rules())}))


def unknown_selector(selector: str) -> str | None:
    """A message when `selector` (a code, a prefix or ALL) names no rule, else None."""
    code = selector.strip().upper()
    known = known_codes()
    if code == "ALL" or any(k.startswith(code) for k in known):
        return None
    import difflib

    close = difflib.get_close_matches(code, known, n=1, cutoff=0.75)
    hint = f"; did you mean {close[0]}?" if close else f" (known: {known[0]} to {known[-1]}, their prefixes, or ALL)"
    return f"unknown rule code {selector.strip()!r}{hint}"


def check_selectors(key: str, selectors) -> None:
    """Raise SettingsError naming `key` and the first code in `selectors` that names no rule
    (a typo there would silently turn a rule off, or never on)."""
    for selector in selectors:
        problem = unknown_selector(selector)
        if problem:
            raise SettingsError(f"{key}: {problem}")


def check_codes(settings: "Settings") -> None:
    """Every code named in `settings` (select, ignore, extend-select, severity, per-file-ignores)."""
    check_selectors("select", settings.select)
    check_selectors("extend-select", settings.extend_select)
    check_selectors("ignore", settings.ignore)
    check_selectors("severity", settings.severity)
    for pattern, codes in settings.per_file_ignores.items():
        check_selectors(f"per-file-ignores.{pattern!r}", codes)


def _relative(path: str, root: Path | None) -> str:
    p = Path(path)
    if root is not None:
        try:
            return p.resolve().relative_to(root.resolve()).as_posix()
        except (ValueError, OSError):
            pass
    return p.as_posix()


def _glob_match(rel: str, pattern: str) -> bool:
    import fnmatch

    if pattern.endswith("/"):
        return rel.startswith(pattern) or f"/{pattern}" in f"/{rel}"
    return fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(Path(rel).name, pattern)


def find_pyproject(start: Path) -> Path | None:
    start = start.resolve()
    if start.is_file():
        start = start.parent
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            from tritonify.infra.bounded_read import read_text

            try:
                raw = read_text(candidate, PYPROJECT_MAX_BYTES)
            except (OSError, UnicodeDecodeError):
                continue
            try:
                data = parse_toml(raw, candidate)
            except SettingsError:
                if "tool.tritonify" in raw:  # ours, but broken: say so rather than use another
                    raise
                continue
            tool = data.get("tool", {})
            if isinstance(tool, dict) and "tritonify" in tool:
                return candidate
    return None


def _table_value(table: dict, *names: str, default=None):
    for name in names:
        if name in table:
            return name, table[name]
    return names[0], default


def from_table(table: dict, root: Path | None = None) -> Settings:
    """Settings from a `[tool.tritonify]` table (also used for editor settings). A value of the
    wrong type raises SettingsError naming the key and the type expected."""
    if not isinstance(table, dict):
        raise SettingsError(f"expected a table, got {_describe(table)}")
    known = {"select", "ignore", "extend-select", "extend_select", "severity", "exclude", "per-file-ignores",
             "per_file_ignores", "max-file-bytes", "max_file_bytes", "lint", "target", "liger-first", "liger_first",
             "triton-version", "triton_version"}
    unknown = set(table) - known
    if unknown:
        raise SettingsError(f"unknown key(s): {', '.join(sorted(unknown))}")
    key, exclude = _table_value(table, "exclude", default=[])
    if not isinstance(exclude, list) or not all(isinstance(x, str) for x in exclude):
        raise SettingsError(f"{key}: expected a list of path patterns (strings), got {_describe(exclude)}")
    key, pfi = _table_value(table, "per-file-ignores", "per_file_ignores", default={})
    if not isinstance(pfi, dict):
        raise SettingsError(f"{key}: expected a table of glob = [codes], got {_describe(pfi)}")
    key, max_bytes = _table_value(table, "max-file-bytes", "max_file_bytes", default=MAX_FILE_BYTES)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
        raise SettingsError(f"{key}: expected a positive integer (bytes), got {_describe(max_bytes)}")
    extend_key, extend_select = _table_value(table, "extend-select", "extend_select", default=[])
    liger_key, liger_first = _table_value(table, "liger-first", "liger_first", default=True)
    if not isinstance(liger_first, bool):
        raise SettingsError(f"{liger_key}: expected true or false, got {_describe(liger_first)}")
    triton_key, triton_version = _table_value(table, "triton-version", "triton_version", default="")
    if not isinstance(triton_version, str):
        raise SettingsError(f"{triton_key}: expected a version or a requirement specifier (a string, \"3.6\" or "
                            f"\">=3.4,<3.9\"), got {_describe(triton_version)}")
    if triton_version.strip():
        from tritonify.diagnostics.triton_api import versions
        from tritonify.diagnostics.triton_api.target import admitted

        if not admitted(triton_version.strip(), versions()):
            raise SettingsError(f"{triton_key}: {triton_version!r} names no Triton version from "
                                f"{versions()[0]} to {versions()[-1]} (write a version, \"3.6\", or a specifier, "
                                f"\">=3.4,<3.9\")")
    return Settings(
        select=tuple(_codes(table.get("select", []), "select")),
        ignore=tuple(_codes(table.get("ignore", []), "ignore")),
        extend_select=tuple(_codes(extend_select, extend_key)),
        severity=_severities(table.get("severity", {})),
        exclude=tuple(exclude),
        per_file_ignores={k: _codes(v, f"{key}.{k!r}") for k, v in pfi.items()},
        max_file_bytes=max_bytes,
        root=root,
        target=_target(table.get("target", "auto")),
        liger_first=liger_first,
        triton_version=triton_version.strip(),
    )


def _target(value) -> str:
    from tritonify.diagnostics.target import SETTING_VALUES

    text = str(value).strip().lower()
    if text not in SETTING_VALUES:
        raise SettingsError(f"unknown target {value!r} in [tool.tritonify] (use {', '.join(SETTING_VALUES)})")
    return text


def load_settings(start: Path | str = ".") -> Settings:
    """Settings from the nearest pyproject.toml with a [tool.tritonify] table (defaults if none).

    A broken table raises SettingsError whose message starts with the file, then the key:
    `pyproject.toml: [tool.tritonify] select: unknown rule code 'TRI0001'; did you mean TRI001?`"""
    pyproject = find_pyproject(Path(start))
    if pyproject is None:
        return Settings(root=Path(start).resolve() if Path(start).is_dir() else Path(start).resolve().parent)
    data = read_toml(pyproject)
    try:
        settings = from_table(data["tool"]["tritonify"], root=pyproject.parent)
        check_codes(settings)
    except SettingsError as exc:
        raise SettingsError(f"{pyproject}: [tool.tritonify] {exc}", path=pyproject) from None
    return settings
