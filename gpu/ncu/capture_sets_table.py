"""The table of `results/ncu_capture_sets_h200.md`: what the detectors say on the committed captures.

    python gpu/ncu/capture_sets_table.py      # prints the Markdown table (no GPU needed)

Reads the fixtures in `tests/ncu/fixtures/h200/sets/` (one capture per kind of report, see
capture_sets.py) the way `tests/ncu/test_capture_sets.py` does. A cell lists the letters named,
those explained by another in parentheses, then "not assessed (X)" for patterns whose metrics
the capture lacks and "[limiter: ...]" when no pattern fired below both roofs.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.ncu.test_capture_sets import MANIFEST, diagnoses  # noqa: E402

COLUMNS = (("triage", "`tritonify profile` triage (CSV = ncu_report)"), ("own", "Tritonify's earlier sections"),
           ("full", "`--set full`"), ("detailed", "`--set detailed`"))


def cell(d) -> str:
    text = ",".join(f"({h.pattern.letter})" if h.explained_by else h.pattern.letter for h in d.hits) or "-"
    if d.not_assessed:
        text += f" not assessed ({','.join(n.pattern.letter for n in d.not_assessed)})"
    if d.limiter is not None:
        text += f" [limiter: {d.limiter.evidence.get('limiter', '?')}]"
    return text


def main() -> int:
    print("| kernel | role | planted | " + " | ".join(title for _, title in COLUMNS) + " |")
    print("|---|---|---|" + "---|" * len(COLUMNS))
    for case in MANIFEST:
        cells = [cell(diagnoses(kind)[case["kernel"]]) for kind, _ in COLUMNS]
        planted = ",".join(case.get("plants", {})) or "-"
        print(f"| {case['kernel']} | {case['role']} | {planted} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
