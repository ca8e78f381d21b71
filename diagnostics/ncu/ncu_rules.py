"""Which pattern an ncu guided-analysis rule speaks to: each pattern module decides (`matches_rule`).

ncu's rules are broader than the patterns (CPIStall names whichever stall reason dominates) and
some patterns have no rule (F, G, K, M), so the mapping looks at the description too. Rules that
name no pattern (HighPipeUtilization, IssueSlotUtilization, FPInstructions on fused FP32,
SOLBottleneck "memory more utilized than compute") map to nothing and are listed as context.
"""
from __future__ import annotations

from tritonify.diagnostics.ncu.details_page import NcuRule


def letters_for(rule: NcuRule) -> set[str]:
    """The patterns whose module says this rule speaks to them (`matches_rule`, else the rule's
    name in the pattern's `ncu_rules`)."""
    from tritonify.diagnostics.ncu.patterns import detectors

    out = set()
    for mod in detectors():
        match = getattr(mod, "matches_rule", None)
        if match(rule) if match else rule.name in mod.PATTERN.ncu_rules:
            out.add(mod.PATTERN.letter)
    return out


def compare(ours: set[str], rules: list[NcuRule]) -> dict:
    """Where our verdicts and ncu's OPT/WRN rules agree and differ, pattern by pattern."""
    fired = [r for r in rules if r.type in ("OPT", "WRN")]
    theirs: dict[str, list[str]] = {}
    for r in fired:
        for letter in letters_for(r):
            theirs.setdefault(letter, []).append(r.name)
    letters = sorted(ours | set(theirs))
    return {
        "both": [x for x in letters if x in ours and x in theirs],
        "tritonify_only": [x for x in letters if x in ours and x not in theirs],
        "ncu_only": {x: sorted(set(theirs[x])) for x in letters if x not in ours},
    }
