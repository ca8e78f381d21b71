"""The wheel holds the whole package: every module of the mapped folders (setup.py's FOLDERS) and
every file of references/ and contract/ (the pages, precision.json, protocol.json: read at run time), and
it imports on its own, from outside the repository.

Built from a copy of the repository's files (tracked and new, not ignored), as scripts/bundle_libs.sh
builds the extension's bundle, so nothing stale in build/ can make it pass.
"""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def folders() -> dict[str, str]:
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FOLDERS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py has no FOLDERS mapping")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_wheel_ships_every_module_and_page_and_imports_alone(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed to list the repository's files")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.splitlines()
    src = tmp_path / "src"
    for rel in files:
        if (ROOT / rel).is_file() and not rel.startswith(("node_modules/", ".e2e/")):
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "-w", str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=500)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "absent from" not in done.stderr, done.stderr[-3000:]   # setuptools: a data folder not declared
    wheel = next((tmp_path / "dist").glob("tritonify-*.whl"))
    shipped = set(zipfile.ZipFile(wheel).namelist())

    wanted = set()
    for folder, name in folders().items():
        for rel in files:
            path = Path(rel)
            if path.parts[0] != folder or "__pycache__" in path.parts:
                continue
            if path.suffix == ".py" or folder in ("references", "contract"):   # data read at run time
                wanted.add("/".join([*name.split("."), *path.parts[1:]]))
    assert {"tritonify/references/rules/precision.json", "tritonify/contract/protocol.json", "tritonify/cli/main.py"} <= wanted
    missing = sorted(wanted - shipped)
    assert not missing, f"not in the wheel: {missing}"

    entry = zipfile.ZipFile(wheel).read(next(n for n in shipped if n.endswith("entry_points.txt"))).decode()
    assert "tritonify = tritonify.cli.main:main" in entry

    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    probe = ("import tritonify, tritonify.cli.main\n"
             "from tritonify.diagnostics.registry import get_rule\n"
             "from tritonify.references import page_path\n"
             "page = get_rule('TRI001').rule.page\n"
             "assert page.is_file() and page_path('A').is_file(), page\n"
             "print(tritonify.cli.main.__file__)\n")
    # -S: no site-packages (not this environment's editable install), only the unpacked wheel.
    ran = subprocess.run([sys.executable, "-S", "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert Path(ran.stdout.strip()) == site / "tritonify" / "cli" / "main.py"


def test_run_from_the_repository_root_the_root_folder_finds_the_mapped_packages():
    """From the repository's root `./tritonify/` comes first on sys.path (it holds only the root): its
    extended path still finds `tritonify.cli` and the rest through the installed package."""
    probe = ("import tritonify, tritonify.cli.main, tritonify.diagnostics.engine\n"
             "print(tritonify.__path__[0]); print(tritonify.__version__)\n")
    ran = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr[-3000:]
    first, version = ran.stdout.split()
    assert Path(first) == ROOT / "tritonify" and version[0].isdigit()
    cli = subprocess.run([sys.executable, "-m", "tritonify", "--version"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert cli.returncode == 0 and cli.stdout.startswith("tritonify "), cli.stderr[-2000:]
