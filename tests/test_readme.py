"""The README's generated blocks are current, and its two commands are what CI runs."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def commands() -> list[str]:
    setup = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)\n```", setup, re.S)


def test_readme_has_exactly_two_setup_commands():
    cmds = commands()
    assert len(cmds) == 2, cmds
    assert "tritonify check examples/" in cmds[0]
    assert cmds[1] == "bash scripts/test.sh"


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    body = [l for l in ci.splitlines() if l.strip() and not l.startswith("#") and not l.startswith(("set ", "cd "))]
    assert body == [f"exec {commands()[1]}"], body


def test_generated_blocks_are_current():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "update_readme.py"), "--check"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
