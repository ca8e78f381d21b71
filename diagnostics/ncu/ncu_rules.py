"""Which of the 14 patterns an ncu guided-analysis rule speaks to, read from its identifier and text.

ncu's rules are broader than the patterns (CPIStall names whichever stall reason dominates) and
some patterns have no rule (F, G, K, M), so the mapping looks at the description too. Rules that
name no pattern (HighPipeUtilization, IssueSlotUtilization, FPInstructions on fused FP32,
SOLBottleneck "memory more utilized than compute") map to nothing and are listed as context.
"""
from __future__ import annotations

from tritonify.diagnostics.ncu.details_page import NcuRule


def letters_for(rule: NcuRule) -> set[str]:
    d = rule.description.lower()
    name = rule.name
    if name == "LaunchConfiguration":
        if "less than the gpu's" in d or "small grid" in d:
            return {"A"}
        if "wave" in d or "tail" in d:
            return {"B"}
        return set()
    if name == "SOLBottleneck":
        return {"A"} if "grid is too small" in d else set()
    if name == "WorkloadImbalance":
        return {"B"} if " sms have" in d or "smsps have" in d else set()
    if name == "UncoalescedGlobalAccess":
        return {"C"}
    if name == "MemoryCacheAccessPattern":
        if "local" in d:
            return {"K"}
        if "store" in d:
            return {"D"}
        if "load" in d:
            return {"C"}
        return set()
    if name == "CPIStall":
        if "scoreboard dependency on a l1tex" in d:
            return {"E"}
        if "barrier" in d:
            return {"I"}
        if "membar" in d or "memory barrier" in d:
            return {"G"}
        return set()
    if name in ("SharedMemoryConflicts", "UncoalescedSharedAccess"):
        return {"H"}
    if name in ("AchievedOccupancy", "TheoreticalOccupancy"):
        return {"J"}
    if name == "SOLFPRoofline":
        return {"L"} if "fp64" in d and rule.type != "INF" else set()
    if name == "FPInstructions":
        return {"L"} if "fp64" in d or "double" in d else set()
    if name == "ThreadDivergence":
        return {"N"}
    return set()


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
