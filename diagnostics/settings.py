"""Lint settings: select/ignore codes and prefixes, severity overrides, excludes.

Read from `[tool.tritonify]` in the nearest `pyproject.toml` (ruff's model) and overridden by
the command line or the editor's settings.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from tritonify.diagnostics.model import Severity

DEFAULT_EXCLUDE = [".git/", ".hg/", ".venv/", "venv/", "node_modules/", "__pycache__/", "build/", "dist/", ".tox/", ".eggs/"]
MAX_FILE_BYTES = 10 * 1024 * 1024


class SettingsError(ValueError):
    pass


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


def _codes(value) -> list[str]:
    if isinstance(value, str):
        value = value.split(",")
    return [v.strip().upper() for v in value if v and v.strip()]


def _severities(value: dict) -> dict:
    out = {}
    for code, sev in (value or {}).items():
        try:
            out[code.upper()] = sev if isinstance(sev, Severity) else Severity.parse(str(sev))
        except ValueError as exc:
            raise SettingsError(f"unknown severity {sev!r} for {code} (use error, warning, info or hint)") from exc
    return out


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
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
                continue
            if "tritonify" in data.get("tool", {}):
                return candidate
    return None


def from_table(table: dict, root: Path | None = None) -> Settings:
    """Settings from a `[tool.tritonify]` table (also used for editor settings)."""
    known = {"select", "ignore", "extend-select", "extend_select", "severity", "exclude", "per-file-ignores",
             "per_file_ignores", "max-file-bytes", "max_file_bytes", "lint"}
    unknown = set(table) - known
    if unknown:
        raise SettingsError(f"unknown key(s) in [tool.tritonify]: {', '.join(sorted(unknown))}")
    return Settings(
        select=tuple(_codes(table.get("select", []))),
        ignore=tuple(_codes(table.get("ignore", []))),
        extend_select=tuple(_codes(table.get("extend-select", table.get("extend_select", [])))),
        severity=_severities(table.get("severity", {})),
        exclude=tuple(table.get("exclude", [])),
        per_file_ignores={k: _codes(v) for k, v in table.get("per-file-ignores", table.get("per_file_ignores", {})).items()},
        max_file_bytes=int(table.get("max-file-bytes", table.get("max_file_bytes", MAX_FILE_BYTES))),
        root=root,
    )


def load_settings(start: Path | str = ".") -> Settings:
    """Settings from the nearest pyproject.toml with a [tool.tritonify] table (defaults if none)."""
    pyproject = find_pyproject(Path(start))
    if pyproject is None:
        return Settings(root=Path(start).resolve() if Path(start).is_dir() else Path(start).resolve().parent)
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    return from_table(data["tool"]["tritonify"], root=pyproject.parent)
