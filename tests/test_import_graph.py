"""The dependency direction of the `tritonify` package, read statically from every module's imports.

Layers, lowest first; a module may import its own layer and the layers below it, never above:

    infra        shared infrastructure (child processes, version, exit codes, NVML): imports nothing else
    contract     the server <-> extension contract (JSON files and their loader): imports nothing else
    references   the Markdown pages and their lookup
    diagnostics  the pure analysis: lint engine, rules, ncu pages and patterns, compile findings
    kernels      templates and the benchmark harness (may use the analysis, e.g. to find kernels)
    tools        what starts processes or runs user code: ncu runs, the report reader, compile children
    server       LSP glue                 \\ glue: nothing below imports them
    cli          the command line          / (cli may start the server; the server never imports cli)
    tritonify    the package root: the version and `python -m tritonify` (nothing imports it)

Every import counts, also those inside functions (a lazy import is still a dependency), and every
`tritonify.*` import must name a module that exists (found through setup.py's folder mapping).

The cut by side effect: the pure analysis (`diagnostics`, and what it stands on) imports nothing of
`tools`, and no module but `infra/child_process.py` starts a process: none imports `subprocess`,
`multiprocessing`, `pty` or `asyncio.subprocess`, or names `os.fork`, `os.exec*`, `os.spawn*`,
`os.posix_spawn*`, `os.system`, `os.popen`, `asyncio.create_subprocess_*` or a
`ProcessPoolExecutor` (read statically, like the imports; no exceptions).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# layer -> the layers it may import (besides itself)
ALLOWED = {
    "infra": set(),
    "contract": set(),
    "references": {"infra"},
    "diagnostics": {"infra", "references"},
    "kernels": {"infra", "references", "diagnostics"},
    "tools": {"infra", "references", "diagnostics", "kernels"},
    "server": {"infra", "contract", "references", "diagnostics", "kernels", "tools"},
    "cli": {"infra", "contract", "references", "diagnostics", "kernels", "tools", "server"},
    "tritonify": {"infra", "contract", "references", "diagnostics", "kernels", "tools", "server", "cli"},
}


def folders() -> dict[str, str]:
    """setup.py's FOLDERS (folder on disk -> import name), read without running setup.py."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FOLDERS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py has no FOLDERS mapping")


FOLDERS = folders()
LAYER_OF_NAME = {name: folder for folder, name in FOLDERS.items()}   # import name -> layer (= folder)


def layer(module: str) -> str | None:
    """The layer a `tritonify...` module belongs to: the longest mapped prefix of its name."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        folder = LAYER_OF_NAME.get(".".join(parts[:n]))
        if folder:
            return folder
    return None


def module_file(module: str) -> Path | None:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        folder = LAYER_OF_NAME.get(".".join(parts[:n]))
        if folder:
            base = ROOT / folder / Path(*parts[n:]) if parts[n:] else ROOT / folder
            for candidate in (base.with_suffix(".py"), base / "__init__.py"):
                if candidate.is_file():
                    return candidate
            return None
    return None


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT)
    parts = [FOLDERS[rel.parts[0]], *rel.with_suffix("").parts[1:]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, here: str | None = None) -> list[tuple[int, str]]:
    """(line, absolute module name) of every `tritonify` import in the file (module `here`, by
    default the file's own name); for `from tritonify import x` each x that is a module counts."""
    here = here or module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            for alias in node.names:   # `from tritonify.cli import commands`: the submodule is the dependency
                sub = f"{target}.{alias.name}"
                if module_file(sub) is not None:
                    found.append((node.lineno, sub))
    return [(line, name) for line, name in found if name == "tritonify" or name.startswith("tritonify.")]


# Modules whose import means starting processes, and the names that start one (a prefix ends in `*`).
PROCESS_MODULES = ("subprocess", "multiprocessing", "pty", "asyncio.subprocess")
PROCESS_STARTERS = ("os.fork", "os.forkpty", "os.exec*", "os.spawn*", "os.posix_spawn*", "os.system", "os.popen",
                    "asyncio.create_subprocess_*", "asyncio.subprocess.create_subprocess_*",
                    "concurrent.futures.ProcessPoolExecutor")
PROCESS_RUNNER = "infra/child_process.py"   # the one module that may


def _process_module(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in PROCESS_MODULES)


def _process_starter(name: str) -> bool:
    return any(name.startswith(s[:-1]) if s.endswith("*") else name == s for s in PROCESS_STARTERS)


def process_starts(path: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of every import of a process module and every use of a process-starting
    name in the file, through aliases (`import os as _os; _os.execv`, `from os import fork`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    alias: dict[str, str] = {}       # local name -> the module or object it is bound to
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                alias[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                if _process_module(a.name):
                    found.append((node.lineno, a.name))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                alias[a.asname or a.name] = full
                if _process_module(node.module) or _process_module(full) or _process_starter(full):
                    found.append((node.lineno, full))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                parts.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in alias:
                dotted = ".".join([alias[value.id], *reversed(parts)])
                if _process_starter(dotted):
                    found.append((node.lineno, dotted))
    return sorted(set(found))


def package_files() -> list[Path]:
    files = []
    for folder in FOLDERS:
        files += [p for p in sorted((ROOT / folder).rglob("*.py"))
                  if not any(part in ("__pycache__", "node_modules") or part.startswith(".") for part in p.parts)]
    return files


def test_every_layer_has_a_folder():
    assert set(FOLDERS) == set(ALLOWED), "setup.py's FOLDERS and this test's layers must name the same folders"


def test_imports_follow_the_layers():
    wrong = []
    for path in package_files():
        mine = path.relative_to(ROOT).parts[0]
        for line, name in imports(path):
            theirs = layer(name)
            if theirs and theirs != mine and theirs not in ALLOWED[mine]:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {mine}/ imports {name} ({theirs}/)")
    assert not wrong, "imports against the dependency direction:\n" + "\n".join(wrong)


def test_every_tritonify_import_names_a_module():
    missing = []
    for path in package_files():
        for line, name in imports(path):
            if module_file(name) is None and module_file(name.rpartition(".")[0]) is None:
                missing.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert not missing, "imports of modules that do not exist:\n" + "\n".join(missing)


def test_no_cycle_between_the_layers():
    """The allowed matrix itself has no cycle (diagnostics <-> kernels above all)."""
    for a, below in ALLOWED.items():
        for b in below:
            assert a not in ALLOWED[b], f"{a} and {b} may import each other"


def test_the_checker_sees_a_wrong_import(tmp_path):
    """A lazy (and a relative) import of the CLI inside a diagnostics function is found: the test can fail."""
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from tritonify.cli.commands import check\n    from ..jobs import x\n"
                     "    from tritonify import __version__\n", encoding="utf-8")
    found = imports(probe, here="tritonify.diagnostics.probe")
    assert (2, "tritonify.cli.commands") in found and (2, "tritonify.cli.commands.check") in found
    assert (3, "tritonify.jobs") in found
    assert (4, "tritonify") in found
    assert layer("tritonify.cli.commands.check") == "cli" and "cli" not in ALLOWED["diagnostics"]
    assert layer("tritonify") == "tritonify" and "tritonify" not in ALLOWED["diagnostics"]
    assert module_file("tritonify.jobs") is None


def test_the_root_holds_only_the_root():
    """`tritonify/` is the package root and nothing else: every other module lives in its mapped folder."""
    assert FOLDERS["tritonify"] == "tritonify" and FOLDERS["cli"] == "tritonify.cli"
    on_disk = sorted(p.name for p in (ROOT / "tritonify").iterdir() if p.name != "__pycache__")
    assert on_disk == ["__init__.py", "__main__.py"], on_disk
    assert module_file("tritonify.cli.main") == ROOT / "cli" / "main.py"
    assert module_file("tritonify.__main__") == ROOT / "tritonify" / "__main__.py"


def test_the_analysis_imports_none_of_the_tools():
    """`tools` (what starts processes or runs user code) sits above the pure side: no layer it
    stands on may import it, and `tools` imports the analysis, never the glue."""
    for pure in ("infra", "contract", "references", "diagnostics", "kernels"):
        assert "tools" not in ALLOWED[pure], pure
    assert ALLOWED["tools"] <= {"infra", "references", "diagnostics", "kernels"}


def test_the_checker_sees_the_analysis_importing_a_tool(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from tritonify.tools.ncu import profile_run\n", encoding="utf-8")
    found = imports(probe, here="tritonify.diagnostics.ncu.probe")
    assert (2, "tritonify.tools.ncu.profile_run") in found
    assert layer("tritonify.tools.ncu.profile_run") == "tools" and "tools" not in ALLOWED["diagnostics"]


def test_only_the_process_runner_starts_processes():
    wrong = []
    for path in package_files():
        rel = path.relative_to(ROOT).as_posix()
        if rel == PROCESS_RUNNER:
            continue
        wrong += [f"{rel}:{line}: {name}" for line, name in process_starts(path)]
    assert not wrong, ("processes started outside infra/child_process.py (use its run_process, run_job or "
                       "PipedChild):\n" + "\n".join(wrong))
    assert process_starts(ROOT / PROCESS_RUNNER), "the runner itself is seen starting processes"


def test_the_checker_sees_a_planted_process_start(tmp_path):
    """Every way in: the modules, their members, the os and asyncio starters, through aliases and
    inside functions; a type name (`asyncio.subprocess.Process` in an annotation) is no start."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import os as _os\nimport asyncio\nfrom concurrent.futures import ProcessPoolExecutor\n"
        "def f():\n    import subprocess\n    from multiprocessing import Pool\n    _os.execvp('x', ['x'])\n"
        "    return _os.fork()\n"
        "async def g(p: asyncio.subprocess.Process):\n    return await asyncio.create_subprocess_exec('x')\n"
        "from os import posix_spawn as spawn\nos_ok = _os.path.join('a', 'b')\n", encoding="utf-8")
    assert process_starts(probe) == [
        (3, "concurrent.futures.ProcessPoolExecutor"), (5, "subprocess"), (6, "multiprocessing.Pool"),
        (7, "os.execvp"), (8, "os.fork"), (10, "asyncio.create_subprocess_exec"), (11, "os.posix_spawn")]
