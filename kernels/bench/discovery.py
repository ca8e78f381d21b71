"""Find contracts and existing ``perf_report`` benchmarks for a kernel file, without configuration.

Where a contract may live, for a kernel file ``path/to/rmsnorm.py`` (searched in this order):
  1. ``path/to/rmsnorm.py`` itself: any module-level ``Contract`` (or list/tuple of them, e.g. ``CONTRACTS``);
  2. ``path/to/rmsnorm_contract.py`` beside it;
  3. ``path/to/bench_rmsnorm.py`` beside it.
A contract file may itself be given as FILE.

Two ways to look:
  * ``load_contracts`` imports the files: it runs user code, so only the child process calls it.
  * ``static_contracts`` / ``static_perf_reports`` only parse them (the language server's code lens).
"""
from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from tritonify.kernels.bench.contract import Contract


def contract_path(kernel_file: Path) -> Path:
    """Where a kernel file's own contract file goes: ``<stem>_contract.py`` beside it."""
    kernel_file = Path(kernel_file)
    return kernel_file.with_name(f"{kernel_file.stem}_contract.py")


def candidate_files(path: Path) -> list[Path]:
    """Files that may hold contracts for the kernel file ``path``, existing ones only, in search order
    (a contract file given as ``path`` is its own only candidate)."""
    path = Path(path)
    if path.stem.endswith("_contract") or path.stem.startswith("bench_"):
        return [path]
    files = [path, contract_path(path), path.with_name(f"bench_{path.stem}.py")]
    return [f for f in files if f.is_file()]


def parse_target(target: str) -> tuple[str, str | None]:
    """``FILE::KERNEL`` -> (FILE, KERNEL); a bare FILE -> (FILE, None)."""
    if "::" in target:
        file, kernel = target.rsplit("::", 1)
        return file, (kernel or None)
    return target, None


def import_file(path: Path) -> ModuleType:
    """Import a user file in this process, its folder first on sys.path (so sibling imports work).

    The module is registered under its own stem when that name is free, so a contract file's
    ``from rmsnorm import rmsnorm`` reuses the kernel module instead of defining it twice.
    """
    path = Path(path).resolve()
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    existing = sys.modules.get(path.stem)
    if existing is not None and Path(getattr(existing, "__file__", "") or "").resolve() == path:
        return existing
    if existing is None and path.stem.isidentifier():
        return importlib.import_module(path.stem)
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
    name = f"_tritonify_user_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def contracts_in(module: ModuleType) -> list[Contract]:
    """Module-level contracts: single values and lists/tuples/dicts of them, in definition order."""
    found: list[Contract] = []
    for value in vars(module).values():
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if isinstance(item, Contract) and all(item is not f for f in found):
                found.append(item)
    return found


def load_contracts(path: Path) -> list[Contract]:
    """Every contract for the kernel file ``path`` (imports user code: child process only)."""
    found: list[Contract] = []
    for file in candidate_files(Path(path)):
        for c in contracts_in(import_file(file)):
            if all(c is not f for f in found):
                found.append(c)
    return found


def select_contract(contracts: list[Contract], kernel: str | None) -> Contract:
    """The contract that ``FILE::kernel`` names (the only one when ``kernel`` is None)."""
    if not contracts:
        raise LookupError("no contract found (define a module-level Contract in the file, "
                          "or in <file>_contract.py / bench_<file>.py beside it)")
    if kernel is None:
        if len(contracts) == 1:
            return contracts[0]
        raise LookupError("several contracts; name one as FILE::KERNEL: " + ", ".join(c.name for c in contracts))
    for c in contracts:
        if c.matches(kernel):
            return c
    raise LookupError(f"no contract for {kernel!r}; contracts here: " + ", ".join(c.name for c in contracts))


# --------------------------------------------------------------------------------------- static

@dataclass(frozen=True)
class ContractRef:
    """Where a contract is written, found by parsing only."""

    name: str          # the kernel (or launcher) name it benchmarks
    file: str
    line: int          # 1-based
    dtype: str = Contract.dtype   # its ``dtype=`` when a literal, else the Contract's default


def _literal_kw(call: ast.Call, name: str) -> str | None:
    for kw in call.keywords:
        if kw.arg == name and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
            return kw.value.value
    return None


def _callee_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _parse(path: Path) -> ast.Module | None:
    """`path` parsed, or None; read with a bound (a link to /proc/kmsg or a FIFO is refused, never
    read: the language server asks this while answering a code action)."""
    from tritonify.diagnostics.settings import MAX_FILE_BYTES
    from tritonify.infra.bounded_read import read_text

    try:
        return ast.parse(read_text(path, MAX_FILE_BYTES, errors="replace"), filename=str(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def static_contracts(path: Path) -> list[ContractRef]:
    """Contracts for the kernel file ``path`` and its sibling contract files, by parsing (no import)."""
    refs: list[ContractRef] = []
    for file in candidate_files(Path(path)):
        tree = _parse(file)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _callee_name(node.func) == "Contract":
                entry = next((kw.value for kw in node.keywords if kw.arg == "entry"), None)
                name = _literal_kw(node, "kernel") or _literal_kw(node, "name") or (
                    _callee_name(entry) if entry is not None else None)
                if name:
                    refs.append(ContractRef(name, str(file), node.lineno, _literal_kw(node, "dtype") or Contract.dtype))
    return refs


def contract_dtype(path: Path | str | None, kernel: str) -> tuple[str, str] | None:
    """(torch dtype name, ``file:line``) of the contract for ``kernel`` beside ``path``, by parsing;
    None without one (the compile inspector's guess for pointer element types)."""
    if not path:
        return None
    for ref in static_contracts(Path(path)):
        if ref.name == kernel:
            return ref.dtype, f"{Path(ref.file).name}:{ref.line}"
    return None


def static_perf_reports(path: Path) -> list[ContractRef]:
    """Functions decorated with ``triton.testing.perf_report(...)`` (any alias), by parsing."""
    tree = _parse(Path(path))
    if tree is None:
        return []
    refs = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if _callee_name(target) == "perf_report":
                    refs.append(ContractRef(node.name, str(path), node.lineno))
    return refs
