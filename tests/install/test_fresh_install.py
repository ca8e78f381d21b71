"""A newcomer's path: a copy of the repository, a fresh venv, the README's first command.

Runs the command exactly as the README writes it and checks the documented result."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def readme_block(name: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.search(rf"<!-- {name}:start[^>]*-->\n(.*?)<!-- {name}:end -->", text, re.S).group(1)


def first_command() -> str:
    setup = (ROOT / "README.md").read_text(encoding="utf-8").split("## Set up", 1)[1]
    return re.findall(r"```bash\n(.*?)\n```", setup, re.S)[0]


@pytest.mark.e2e
@pytest.mark.timeout(900)
def test_readme_first_command_in_a_fresh_venv(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed to list the repository's files")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.splitlines()
    copy = tmp_path / "tritonify"
    for rel in files:
        src = ROOT / rel
        if src.is_file() and not rel.startswith(("node_modules/", ".e2e/")):
            dst = copy / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    r = subprocess.run(["bash", "-c", first_command()], cwd=copy, capture_output=True, text=True, timeout=900)
    assert r.returncode == 1, f"exit {r.returncode} (1 = findings)\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    documented = readme_block("examples")
    summary = [l for l in r.stdout.splitlines() if l.startswith(("Found ", "[*] "))]
    assert summary and all(line in documented for line in summary), (summary, documented)
    stats = subprocess.run([str(copy / ".venv" / "bin" / "tritonify"), "check", "examples/", "--statistics"],
                           cwd=copy, capture_output=True, text=True, timeout=300).stdout
    assert stats.strip() in documented
    # the core install is the linter alone: no GPU stack was pulled in
    probe = subprocess.run([str(copy / ".venv" / "bin" / "python"), "-c", "import importlib.util as u; print(u.find_spec('torch') is None)"],
                           capture_output=True, text=True)
    assert probe.stdout.strip() == "True"
