"""The development install is one that editors and type checkers resolve.

`tritonify.*` is mapped onto the repository's top-level folders (setup.py's FOLDERS): `tritonify/`
on disk holds only the package root, `tritonify.cli` is `cli/`, `tritonify.diagnostics` is
`diagnostics/`, and so on. setuptools' default editable install resolves the mapping with an
import hook, which runs only inside Python: a static tool (Pylance/pyright, mypy, jedi) cannot
follow it. scripts/install.sh therefore installs with `editable_mode=strict`, which builds a tree
of links named as the imports are (build/__editable__.*/tritonify/...) and puts it on sys.path.
This test makes that install (into a scratch prefix) and has mypy resolve `tritonify.*` imports
of a few modules through it, statically; unresolved `tritonify` imports fail the test.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Modules whose imports cross the layers (cli -> diagnostics -> references/infra, kernels -> diagnostics).
MODULES = ["tritonify.__main__", "tritonify.cli.commands.rule", "tritonify.diagnostics.lookup", "tritonify.kernels.bench.scaffold",
           "tritonify.server.arguments", "tritonify.infra.nvml"]
CONFIG = """\
[mypy]
follow_imports = silent
no_site_packages = True
ignore_missing_imports = True
[mypy-tritonify.*]
ignore_missing_imports = False
"""


def install_script_mode() -> str:
    text = (ROOT / "scripts" / "install.sh").read_text(encoding="utf-8")
    assert "editable_mode=strict" in text, "scripts/install.sh must install with editable_mode=strict"
    return "strict"


def unresolved(search_path: Path, tmp_path: Path) -> tuple[list[str], str]:
    """mypy's `tritonify` import errors when `search_path` is where imports are looked up."""
    config = tmp_path / "mypy.ini"
    config.write_text(CONFIG, encoding="utf-8")
    argv = [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(tmp_path / "cache")]
    for module in MODULES:
        argv += ["-m", module]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={"MYPYPATH": str(search_path), "PATH": "/usr/bin:/bin"})
    out = done.stdout + done.stderr
    bad = [line for line in out.splitlines()
           if "tritonify" in line and ("import-not-found" in line or "cannot find" in line.lower()
                                       or "can't find" in line.lower())]
    return bad, out


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_strict_editable_install_resolves_tritonify_imports_statically(tmp_path):
    pytest.importorskip("mypy")
    mode = install_script_mode()
    prefix = tmp_path / "prefix"
    # --ignore-installed: install into the scratch prefix only; without it pip would first
    # uninstall the running environment's own tritonify.
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--ignore-installed", "--no-deps",
                           "--no-build-isolation", "--prefix", str(prefix), "--config-settings", f"editable_mode={mode}", "-e", str(ROOT)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    pth = [p for p in prefix.rglob("__editable__*.pth")]
    assert pth, "the strict install wrote no .pth"
    link_tree = Path(pth[0].read_text(encoding="utf-8").strip().splitlines()[0])
    assert (link_tree / "tritonify" / "__init__.py").exists(), link_tree
    bad, out = unresolved(link_tree, tmp_path)
    assert not bad, out[-4000:]
    # Without the link tree the repository is all a static tool sees: it finds the root `tritonify/`
    # but not the mapped sub-packages (the check above can fail).
    bad_without, _ = unresolved(ROOT, tmp_path)
    assert bad_without
