"""Which Triton versions a file's project runs (like ruff's target-version), read statically.

A rule that says "the kernel does not compile" (TRI026) must judge the Triton the project runs,
not the one in the linter's own environment: block pointers (`tl.advance`, `boundary_check=`)
were removed in Triton 3.9, and a project on torch's pinned Triton 3.6 compiles them fine.
`target(path, setting)` answers the recorded versions (`triton_api.versions()`) the project
admits and where that came from, first of:

1. `TRITONIFY_TRITON_VERSION` in the environment (one version: the freshcode harness sets the
   version its programs ran on);
2. the `triton-version` setting of `[tool.tritonify]` (a version, `"3.6"`, or a requirement
   specifier, `">=3.4,<3.9"`);
3. the project's declared requirements, in the nearest folder above the file that declares
   `triton` or `torch` (up to the project's folder: the first with a `pyproject.toml`, `setup.py`,
   `setup.cfg` or `.git`): `pyproject.toml` (`[project] dependencies` and optional dependencies),
   `setup.py` / `setup.cfg` (the requirement strings), `requirements*.txt`. A `torch` pin counts
   through the Triton version that torch release pins (`TORCH_PINS`, torch's own wheels); a torch
   release not in that table, or a specifier with no upper bound, admits every later version;
4. a virtual environment inside the project folder (`.venv`, `venv`, `env`) with a
   `triton-*.dist-info`; the linter's own environment counts only when it is such a folder;
5. unknown: every recorded version.

Files are read with a bound and never executed (`setup.py` is scanned for string literals).
Results are cached per folder for the process (a project's pins change rarely; the editor's
server restarts read them again).
"""
from __future__ import annotations

import ast
import os
import re
import sys
from functools import lru_cache
from pathlib import Path

from tritonify.infra.bounded_read import read_bytes

_MAX_BYTES = 1_000_000
# torch release -> the Triton its CUDA wheels pin (`Requires-Dist: triton==X`).
TORCH_PINS = {"2.6": "3.2.0", "2.7": "3.3.1", "2.8": "3.4.0", "2.9": "3.5.1", "2.10": "3.6.0", "2.11": "3.6.0"}
_DECLARATIONS = ("pyproject.toml", "setup.py", "setup.cfg")
_VENVS = (".venv", "venv", "env")
_REQ = re.compile(r"^\s*(triton|torch)\s*(\[[^\]]*\])?\s*((?:[<>=!~]=?\s*[\w.*+-]+\s*,?\s*)*)\s*(?:;.*)?$", re.I)


def _key(version: str) -> tuple[int, ...]:
    nums = [int(x) for x in re.findall(r"\d+", version)[:3]]
    return tuple(nums + [0] * (3 - len(nums)))


def _clause_holds(version: str, op: str, bound: str) -> bool:
    v, b = _key(version), _key(bound.rstrip(".*"))
    if bound.endswith(".*"):
        width = len(re.findall(r"\d+", bound))
        same = v[:width] == b[:width]
        return same if op == "==" else not same
    if op == "==":
        width = len(re.findall(r"\d+", bound))
        return v[:width] == b[:width]
    if op == "!=":
        return v != b
    if op == ">=":
        return v >= b
    if op == "<=":
        return v <= b
    if op == ">":
        return v > b
    if op == "<":
        return v < b
    if op == "~=":
        width = len(re.findall(r"\d+", bound))
        return v >= b and v[:max(1, width - 1)] == b[:max(1, width - 1)]
    return True


def _clauses(spec: str) -> list[tuple[str, str]] | None:
    """`">=3.4, <3.9"` -> [(">=", "3.4"), ("<", "3.9")]; a bare version means `==`; None when
    the text is not a specifier."""
    out = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        m = re.fullmatch(r"(==|!=|>=|<=|~=|>|<|===)?\s*v?(\d+(?:\.\d+){0,2}(?:\.\*)?)[\w.+-]*", part)
        if not m:
            return None
        out.append(((m.group(1) or "==").replace("===", "=="), m.group(2)))
    return out


def admitted(spec: str, recorded: list[str]) -> list[str] | None:
    """The recorded Triton versions a specifier admits (a version between two recorded ones is
    judged by the nearest older recorded one, as `triton_api.for_version` does), or None when the
    specifier is not readable."""
    clauses = _clauses(spec)
    if clauses is None:
        return None
    if not clauses:
        return list(recorded)
    out = []
    for i, v in enumerate(recorded):
        nxt = recorded[i + 1] if i + 1 < len(recorded) else None
        # the release line of `v` runs up to the next recorded version: any version in it admitted
        # stands for `v` (`>=3.6.1` admits 3.6.x, recorded as 3.6.0)
        probes = [v] + [f"{_key(v)[0]}.{_key(v)[1]}.{p}" for p in range(1, 10)]
        if nxt is None:
            probes += ["99.0.0"] if all(op in (">=", ">", "!=") for op, _ in clauses) else []
        if any(all(_clause_holds(p, op, b) for op, b in clauses) for p in probes
               if nxt is None or _key(p) < _key(nxt)):
            out.append(v)
    return out


def _torch_to_triton(clauses: list[tuple[str, str]], recorded: list[str]) -> list[str] | None:
    """The Triton versions the torch releases a torch specifier admits pin."""
    known = sorted(TORCH_PINS, key=_key)
    hits = [t for t in known if all(_clause_holds(t + ".0", op, b) for op, b in clauses)
            or all(_clause_holds(t + ".9", op, b) for op, b in clauses)]
    newer = all(_clause_holds("99.0.0", op, b) for op, b in clauses)
    if not hits and not newer:
        # a torch release the table does not know (2.12 and later): no information
        return None
    out = {r for r in recorded for t in hits if _key(r)[:2] == _key(TORCH_PINS[t])[:2]}
    if newer or not hits:
        base = max((TORCH_PINS[t] for t in hits), key=_key, default="0.0.0")
        out |= {r for r in recorded if _key(r) >= _key(base)}
    return sorted(out, key=_key) or None


def _requirement_strings(folder: Path) -> list[str]:
    texts: list[str] = []
    for name in _DECLARATIONS:
        p = folder / name
        if not p.is_file():
            continue
        try:
            raw = read_bytes(p, _MAX_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        if name == "pyproject.toml":
            texts += _pyproject_requirements(raw)
        elif name == "setup.py":
            texts += _literal_strings(raw)
        else:
            texts += raw.splitlines()
    try:
        reqs = sorted(folder.glob("requirements*.txt"))
    except OSError:
        reqs = []
    for p in reqs:
        try:
            texts += read_bytes(p, _MAX_BYTES).decode("utf-8", "replace").splitlines()
        except OSError:
            continue
    return texts


def _pyproject_requirements(raw: str) -> list[str]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        data = tomllib.loads(raw)
    except (tomllib.TOMLDecodeError, RecursionError):
        return []
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    out = [d for d in project.get("dependencies", []) if isinstance(d, str)]
    optional = project.get("optional-dependencies")
    if isinstance(optional, dict):
        out += [d for deps in optional.values() if isinstance(deps, list) for d in deps if isinstance(d, str)]
    return out


def _literal_strings(raw: str) -> list[str]:
    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _declared(folder: Path, recorded: list[str]) -> tuple[list[str], str] | None:
    """(admitted versions, source) from the requirements this folder declares, or None."""
    triton, torch = [], []
    for text in _requirement_strings(folder):
        m = _REQ.match(text.strip().strip("'\""))
        if not m:
            continue
        (triton if m.group(1).lower() == "triton" else torch).append(re.sub(r"\s+", "", m.group(3) or ""))
    for spec in triton:
        got = admitted(spec, recorded)
        if got:
            return got, f"what `triton{spec}` in {folder.name}/ admits"
    for spec in torch:
        clauses = _clauses(spec)
        if clauses:
            got = _torch_to_triton(clauses, recorded)
            if got:
                return got, f"the Triton that `torch{spec}` in {folder.name}/ pins"
    return None


def _venv_version(folder: Path) -> str | None:
    for name in _VENVS:
        env = folder / name
        if not env.is_dir():
            continue
        for site in [*env.glob("lib/python*/site-packages"), env / "Lib" / "site-packages"]:
            for info in site.glob("triton-*.dist-info"):
                m = re.match(r"triton-(\d+(?:\.\d+)*)", info.name)
                if m:
                    return m.group(1)
    return None


def _own_environment(folder: Path) -> str | None:
    """The linter's own environment's Triton, when that environment is a folder of the project."""
    prefix = Path(sys.prefix).resolve()
    if prefix.parent != folder or prefix.name not in _VENVS:
        return None
    from tritonify.diagnostics.triton_api import _distribution_version

    return _distribution_version()


def _nearest(version: str, recorded: list[str]) -> str:
    older = [v for v in recorded if _key(v)[:2] <= _key(version)[:2]]
    return max(older, key=_key) if older else max(recorded, key=_key)


@lru_cache(maxsize=4096)
def _from_folder(folder: Path, recorded: tuple[str, ...]) -> tuple[tuple[str, ...], str] | None:
    """What `folder` or the nearest folder above it declares (each folder read once: the files of a
    tree share their parents' answer)."""
    rec = list(recorded)
    got = _declared(folder, rec)
    if got:
        return tuple(got[0]), got[1]
    found = _venv_version(folder) or _own_environment(folder)
    if found:
        return (_nearest(found, rec),), f"triton {found}, installed in {folder.name}/"
    if any((folder / name).is_file() for name in _DECLARATIONS) or (folder / ".git").exists():
        return None     # the project's own folder declares nothing: a folder above is another project
    parent = folder.parent
    return None if parent == folder else _from_folder(parent, recorded)


_FOLDERS: dict[str, Path] = {}   # file path -> the folder found for it (not a failure: it may be made later)


def _folder_of(path: str) -> Path | None:
    """The folder that holds the file at `path` (symbolic links followed), when it is one; found
    once per file path, as `_from_folder` reads each folder once (every kernel file asks)."""
    found = _FOLDERS.get(path)
    if found is not None:
        return found
    try:
        folder = Path(path).resolve().parent
    except (OSError, RuntimeError):
        return None
    if not folder.is_dir():
        return None
    if len(_FOLDERS) >= 4096:
        _FOLDERS.clear()
    _FOLDERS[path] = folder
    return folder


def target(path: str | None, setting: str = "") -> tuple[tuple[str, ...], str]:
    """(the recorded Triton versions the file's project runs, oldest first; where that came from)."""
    from tritonify.diagnostics.triton_api import versions

    recorded = versions()
    forced = os.environ.get("TRITONIFY_TRITON_VERSION")
    if forced:
        return (_nearest(forced, recorded),), f"TRITONIFY_TRITON_VERSION={forced}"
    if setting:
        got = admitted(setting, recorded)
        if got:
            return tuple(got), f"triton-version = \"{setting}\" in the settings"
    if path and not path.startswith("<"):
        folder = _folder_of(path)
        if folder is not None:
            got = _from_folder(folder, tuple(recorded))
            if got:
                return got
    return tuple(recorded), "every release: the project declares no triton or torch requirement"
