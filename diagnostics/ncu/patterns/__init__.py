"""The bottleneck patterns, one module each, found by name (`<letter>_<what>.py`).

A pattern module defines:
* `PATTERN`: letter, title, the ncu rules that speak to the same thing, the one-line fix;
* `detect(ctx) -> Hit | None`: reads metrics through `ctx.m()` (raises `Missing` when the
  report lacks them: the pattern is then "not assessed") and `ctx.opt()` (evidence only);
* `METRICS`: the metrics it reads, first choice per quantity: what `tritonify profile`'s triage
  collection asks ncu for by name, so each must be collectable by name (ncu skips an unknown or
  section-only name silently; tests/ncu/test_profile.py checks them against the H200 reports);
* optional: `FALLBACKS` (metric -> other names to try in order: sm_80/sm_100, `--set full` /
  `detailed` siblings), `EXPLAINS` (letters of the patterns this one causes, ranked after it),
  `OPCODES` (SASS opcodes of the instructions that carry its cost on a line),
  `matches_rule(rule)` (which ncu rule says the same; ncu_rules.py), `actions(...)` (code
  actions, built from code_actions.py's edits), `more_fix_lines(...)` (extra fix lines of a
  finding; findings.py), `FALLBACK_ONLY` (runs only when nothing else fired: z_limiter.py).
Adding a pattern is this module, its page in references/patterns/ and its tests
(CONTRIBUTING.md, "Adding a bottleneck pattern").
"""
from __future__ import annotations

from functools import lru_cache
from types import ModuleType

from tritonify.infra.discovery import DiscoveryError, discover

@lru_cache(maxsize=1)
def detectors() -> tuple[ModuleType, ...]:
    """Every pattern module; one that would not register raises DiscoveryError (never skipped)."""
    import sys

    mods = discover(sys.modules[__name__], kind="pattern", name_pattern=r"[a-z]_[a-z0-9_]+",
                    required=("PATTERN", "detect"))
    for mod in mods:
        own = mod.__name__.rsplit(".", 1)[-1]
        if mod.PATTERN.letter.lower() != own[0]:
            raise DiscoveryError(f"{mod.__name__}: its PATTERN's letter {mod.PATTERN.letter} differs from its file name")
    return tuple(mods)


def by_letter(letter: str) -> ModuleType | None:
    for mod in detectors():
        if mod.PATTERN.letter == letter.upper():
            return mod
    return None


def all_metrics() -> tuple[str, ...]:
    """Every metric some pattern reads (first choices), in a stable order."""
    seen: dict[str, None] = {}
    for mod in detectors():
        for name in getattr(mod, "METRICS", ()):
            seen.setdefault(name, None)
    return tuple(seen)


def explains() -> dict[str, tuple[str, ...]]:
    return {mod.PATTERN.letter: tuple(mod.EXPLAINS) for mod in detectors() if getattr(mod, "EXPLAINS", ())}
