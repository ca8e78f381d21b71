"""`tritonify diagnose REPORT`: name the bottleneck patterns in an Nsight Compute report.

REPORT is an `.ncu-rep` (needs `ncu`) or the raw-page CSV (`ncu --import R.ncu-rep --csv --page
raw`), so reports taken on a cluster can be read anywhere. `--details` adds ncu's own rules for
comparison; `--source` (repeatable) adds source pages for line attribution.
"""
from __future__ import annotations

import sys

NAME = "diagnose"
HELP = "name the bottleneck patterns in an ncu report or its CSV export"
ORDER = 40


def add_arguments(p):
    p.add_argument("report", help=".ncu-rep, or the CSV of `ncu --csv --page raw` (.gz accepted)")
    p.add_argument("--source", action="append", default=[], metavar="SOURCE_CSV",
                   help="source page CSV (`--page source --print-source cuda,sass -k regex:NAME`); repeatable")
    p.add_argument("--details", metavar="DETAILS_CSV", help="details page CSV, for ncu's own rules")
    p.add_argument("--format", choices=["text", "json"], default="text", help="output format")
    p.add_argument("--root", action="append", default=[],
                   help="folder to find the kernel's source under when the report came from another machine")


def run(args) -> int:
    from tritonify.diagnostics.ncu.errors import ProfileError
    from tritonify.tools.ncu.inputs import load
    from tritonify.diagnostics.ncu.raw_page import PageError
    from tritonify.diagnostics.ncu.render import to_json, to_text

    try:
        pages = load(args.report, args.source, args.details)
        diagnoses = pages.diagnose(roots=args.root or None)
    except ProfileError as exc:
        print(f"tritonify: error: {exc}", file=sys.stderr)
        return 2
    except (PageError, OSError, UnicodeError) as exc:
        print(f"tritonify: error: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(to_json(diagnoses, roots=args.root or None))
    else:
        print(to_text(diagnoses) if diagnoses else "the report holds no profiled launch")
    return 1 if any(d.hits for d in diagnoses) else 0
