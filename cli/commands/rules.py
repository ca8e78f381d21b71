"""`tritonify rules`: list every rule with its severity and whether it has a fix."""
from __future__ import annotations

import json

from tritonify.diagnostics.registry import all_rules

NAME = "rules"
HELP = "list the rules"
ORDER = 21


def add_arguments(p):
    p.add_argument("--format", choices=["text", "json", "markdown"], default="text")


def run(args) -> int:
    from tritonify.diagnostics.rule_table import fix_cell

    rules = [r.rule for r in all_rules()]
    if args.format == "markdown":
        from tritonify.diagnostics.rule_table import markdown

        print(markdown())
        return 0
    if args.format == "json":
        print(json.dumps([{"code": r.code, "name": r.name, "summary": r.summary, "severity": r.severity.value,
                           "fixable": r.fixable, "fix": fix_cell(r), "page": str(r.page)} for r in rules], indent=2))
        return 0
    for r in rules:
        print(f"{r.code}  {r.name:<32} {r.severity.value:<8} {(fix_cell(r) or '-'):<6}  {r.summary}")
    return 0
