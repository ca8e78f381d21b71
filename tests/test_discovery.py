"""Discovery folders (rules, patterns, CLI sub-commands) never skip a module silently."""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tritonify.infra.discovery import DiscoveryError, discover


def _package(tmp_path: Path, name: str, modules: dict[str, str]):
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for mod, text in modules.items():
        (pkg / f"{mod}.py").write_text(textwrap.dedent(text))
    sys.path.insert(0, str(tmp_path))
    try:
        import importlib
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


def _clear(name: str) -> None:
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]


def test_a_registering_module_is_found_and_a_private_helper_is_not(tmp_path):
    pkg = _package(tmp_path, "disc_ok", {
        "a_small": "PATTERN = 1\ndef detect(ctx): return None\n",
        "_helpers": "X = 1\n",
    })
    try:
        found = discover(pkg, kind="pattern", name_pattern=r"[a-z]_[a-z0-9_]+", required=("PATTERN", "detect"))
        assert [m.__name__ for m in found] == ["disc_ok.a_small"]
    finally:
        _clear("disc_ok")


def test_a_module_whose_name_breaks_the_rule_is_an_error(tmp_path):
    # The case that used to pass 51 tests: a pattern module named `o2_...` was never loaded.
    pkg = _package(tmp_path, "disc_badname", {
        "a_small": "PATTERN = 1\ndef detect(ctx): return None\n",
        "o2_new_pattern": "PATTERN = 1\ndef detect(ctx): return None\n",
    })
    try:
        with pytest.raises(DiscoveryError, match=r"disc_badname\.o2_new_pattern.*would not be registered"):
            discover(pkg, kind="pattern", name_pattern=r"[a-z]_[a-z0-9_]+", required=("PATTERN", "detect"))
    finally:
        _clear("disc_badname")


def test_a_module_that_lacks_what_registers_it_is_an_error(tmp_path):
    pkg = _package(tmp_path, "disc_missing", {"tri999_forgot": "RULE = 1\n"})
    try:
        with pytest.raises(DiscoveryError, match=r"tri999_forgot.*lacks check"):
            discover(pkg, kind="rule", name_pattern=r"tri\d{3}_[a-z0-9_]+", required=("RULE", "check"))
    finally:
        _clear("disc_missing")


def test_only_imports_the_one_module_asked_for(tmp_path):
    pkg = _package(tmp_path, "disc_only", {
        "alpha": "NAME = 'alpha'\n",
        "beta": "raise ImportError('beta must not be imported')\n",
    })
    try:
        found = discover(pkg, kind="command", name_pattern=r"[a-z]+", required=("NAME",), only="alpha")
        assert [m.__name__ for m in found] == ["disc_only.alpha"]
    finally:
        _clear("disc_only")


def _public_modules(folder: Path, recursive: bool = False) -> set[str]:
    files = folder.rglob("*.py") if recursive else folder.glob("*.py")
    return {p.stem for p in files if not p.name.startswith("_")}


def test_every_rule_pattern_and_command_module_in_the_tree_registers():
    from tritonify.cli.main import _command_modules
    from tritonify.diagnostics.ncu import patterns
    from tritonify.diagnostics.registry import all_rules
    import tritonify.cli.commands as commands
    import tritonify.diagnostics.rules as rules

    rule_files = _public_modules(Path(rules.__path__[0]).resolve(), recursive=True)
    assert {r.module.__name__.rsplit(".", 1)[-1] for r in all_rules()} == rule_files
    pattern_files = _public_modules(Path(patterns.__path__[0]).resolve())
    assert {m.__name__.rsplit(".", 1)[-1] for m in patterns.detectors()} == pattern_files
    command_files = _public_modules(Path(commands.__path__[0]).resolve())
    assert {m.__name__.rsplit(".", 1)[-1] for m in _command_modules()} == command_files


# Prose that counts or spans the patterns: README, CONTRIBUTING, docs/, references/, the manifest.
_PROSE = ["README.md", "CONTRIBUTING.md", "package.json", "docs", "references", "kernels/templates/README.md"]


def _prose_files(root: Path):
    for entry in _PROSE:
        path = root / entry
        if path.is_dir():
            yield from sorted(path.rglob("*.md"))
        elif path.exists():
            yield path


def test_prose_counts_and_letter_ranges_of_the_patterns_match_the_registry():
    import re

    from tritonify.diagnostics.ncu import patterns

    letters = sorted(m.PATTERN.letter for m in patterns.detectors())
    last_named = [x for x in letters if x != "Z"][-1]
    words = {"fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17}
    root = Path(__file__).resolve().parents[1]
    count = re.compile(r"\b(\d+|fourteen|fifteen|sixteen|seventeen) (?:bottleneck )?patterns\b", re.I)
    span = re.compile(r"\bpatterns?\W{0,3}\(?A[–-]([A-Z])\b")
    stale = []
    for path in _prose_files(root):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in count.finditer(line):
                n = int(m.group(1)) if m.group(1).isdigit() else words[m.group(1).lower()]
                if n != len(letters):
                    stale.append(f"{path.relative_to(root)}:{number}: {m.group(0)!r} (there are {len(letters)})")
            for m in span.finditer(line):
                if m.group(1) != last_named:
                    stale.append(f"{path.relative_to(root)}:{number}: {m.group(0)!r} (the letters run A–{last_named}, and Z)")
    assert not stale, "\n".join(stale)
