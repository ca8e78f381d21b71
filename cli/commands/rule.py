"""`tritonify rule CODE`: print a rule's page (or a pattern's: `tritonify rule K`, or a compile finding's: `CMP-K`)."""
from __future__ import annotations

import sys

from tritonify.diagnostics.lookup import rule_page

NAME = "rule"
HELP = "print the page of a rule (TRI001) or bottleneck pattern (C)"
ORDER = 20


def add_arguments(p):
    p.add_argument("code", help="rule code such as TRI001, or a pattern letter such as C")


def run(args) -> int:
    page = rule_page(args.code)
    if page is None:
        print(f"tritonify: error: no rule or pattern named {args.code!r} (see `tritonify rules`)", file=sys.stderr)
        return 2
    print(page.text.rstrip())
    return 0
