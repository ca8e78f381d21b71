"""ncu's own guided-analysis verdicts from the details page (`--csv --page details`).

The page is long: one row per (launch, section, metric) plus rule rows whose `Rule Name` is
set (`CPIStall`, `UncoalescedGlobalAccess`, ...). Only the rule rows are kept: they are what the
patterns are compared with.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from tritonify.diagnostics.ncu.raw_page import PageError
from tritonify.diagnostics.ncu.values import parse_number


@dataclass(frozen=True)
class NcuRule:
    launch_id: str
    kernel: str
    section: str
    name: str            # rule identifier, e.g. "UncoalescedGlobalAccess"
    type: str            # OPT, WRN or INF
    description: str
    speedup_type: str    # "local", "global" or ""
    speedup: float | None

    def to_dict(self) -> dict:
        return {"rule": self.name, "type": self.type, "section": self.section,
                "estimated_speedup": self.speedup, "speedup_type": self.speedup_type,
                "description": self.description}


def parse_details(text: str) -> list[NcuRule]:
    from tritonify.diagnostics.ncu.raw_page import PageError, csv_rows

    table = csv_rows(text, "details")
    fieldnames = table[0] if table else []
    # metric rows stop after the (empty) "Rule Name" cell; rule rows have every column
    widths = {len(fieldnames), fieldnames.index("Rule Name") + 1 if "Rule Name" in fieldnames else len(fieldnames)}
    for number, cells in enumerate(table[1:], 2):
        if len(cells) not in widths:
            raise PageError(f"row {number} of the details page has {len(cells)} cells where the header has "
                            f"{len(fieldnames)}: the file is truncated or damaged")
    rows = (dict(zip(fieldnames, cells)) for cells in table[1:])
    if not fieldnames or "Rule Name" not in fieldnames:
        raise PageError("not an ncu details page: expected a \"Rule Name\" column "
                        "(export with `ncu --import R.ncu-rep --csv --page details`)")
    rules = []
    for row in rows:
        name = (row.get("Rule Name") or "").strip()
        if not name:
            continue
        rules.append(NcuRule(
            launch_id=(row.get("ID") or "").strip(),
            kernel=(row.get("Kernel Name") or "").strip(),
            section=(row.get("Section Name") or "").strip(),
            name=name,
            type=(row.get("Rule Type") or "").strip(),
            description=" ".join((row.get("Rule Description") or "").split()),
            speedup_type=(row.get("Estimated Speedup Type") or "").strip(),
            speedup=parse_number(row.get("Estimated Speedup")),
        ))
    return rules


def by_launch(rules: list[NcuRule]) -> dict[str, list[NcuRule]]:
    out: dict[str, list[NcuRule]] = {}
    for r in rules:
        out.setdefault(r.launch_id, []).append(r)
    return out
