"""Regenerate the README's generated blocks: the rule table, the examples' documented result and the
template table (from the committed three-way records).

    python scripts/update_readme.py          # rewrite README.md
    python scripts/update_readme.py --check  # exit 1 when a block is stale (tests/test_readme.py)
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def examples_block() -> str:
    """What a newcomer sees at the end of `tritonify check examples/` (statistics and summary)."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    stats = subprocess.run([sys.executable, "-m", "tritonify", "check", "examples/", "--statistics"],
                           cwd=ROOT, capture_output=True, text=True, env=env).stdout
    text = subprocess.run([sys.executable, "-m", "tritonify", "check", "examples/"],
                          cwd=ROOT, capture_output=True, text=True, env=env).stdout
    summary = "\n".join(line for line in text.splitlines() if line.startswith(("Found ", "[*] ", "All checks")))
    return f"```console\n$ tritonify check examples/ --statistics\n{stats.rstrip()}\n$ tritonify check examples/ | tail -2\n{summary}\n```"


def templates_block() -> str:
    """The template table, from the committed three-way records (gpu/templates/readme_table.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("readme_table", ROOT / "gpu" / "templates" / "readme_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.table()


def conv_block() -> str:
    """The convolution templates' tables, from the committed records (gpu/templates/readme_table.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("readme_table", ROOT / "gpu" / "templates" / "readme_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.conv_table()


def blocks() -> dict[str, str]:
    from tritonify.diagnostics.rule_table import markdown

    return {"rules": markdown(), "examples": examples_block(), "templates": templates_block(), "conv": conv_block()}


def render(text: str) -> str:
    for name, body in blocks().items():
        pattern = re.compile(rf"(<!-- {name}:start[^>]*-->\n).*?(<!-- {name}:end -->)", re.S)
        text = pattern.sub(lambda m: f"{m.group(1)}{body}\n{m.group(2)}", text)
    return text


def main() -> int:
    old = README.read_text(encoding="utf-8")
    new = render(old)
    if "--check" in sys.argv:
        if new != old:
            print("README.md is stale: run `python scripts/update_readme.py`", file=sys.stderr)
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    print("README.md " + ("updated" if new != old else "already current"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
