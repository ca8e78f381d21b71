"""Per-rule precision from the hand labels of the real-world study.

    python benchmarks/realworld/precision.py           # write references/rules/precision.json and each page's section
    python benchmarks/realworld/precision.py --check   # exit 1 when either is stale (tests/test_precision_study.py)

Labels: `benchmarks/realworld/labels/round<N>_<part>.csv` (columns id, code, path, line, severity,
label, reason, message; label TP, FP or NOISE, by the written standard in CONTRIBUTING.md,
"Labelling findings": TP only where the author would act; spec hygiene every backend resolves the
same way is NOISE). A labelled row must carry its reason. Precision is TP / labelled. A rule's page gets
a "Measured precision" section between `<!-- precision:start -->` and `<!-- precision:end -->`;
the README's rule table (diagnostics/rule_table.py) reads the same JSON.

Rules whose findings say a kernel does not compile (`Rule.compile_break`) are also measured against
ground truth, by running: the freshcode report (`results/freshcode/report_all.json`,
benchmarks/freshcode/: programs run on the H200), TP = rejected programs where the rule names the
compiler's cause, FP = programs that compiled and ran where it gives an error. That figure decides
their place in the default set (a compile break is a fact the compiler settles, not a reading); the
corpus rounds are shown beside it.
"""
from __future__ import annotations

import csv
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LABELS = ROOT / "benchmarks" / "realworld" / "labels"
PAGES = ROOT / "references" / "rules"
OUT = PAGES / "precision.json"
GROUND_TRUTH = ROOT / "results" / "freshcode" / "report_all.json"
VALID = ("TP", "FP", "NOISE")
SECTION = re.compile(r"\n*<!-- precision:start -->.*?<!-- precision:end -->\n?", re.S)


def load_rounds(with_narrowed: bool = False) -> dict[str, dict[str, dict[str, int]]]:
    """{"1": {"TRI001": {"TP": 3, "FP": 1, "NOISE": 1}}, ...} from every labelled part.
    `with_narrowed`: also the rows of `narrowed_round<N>.csv` (labelled findings that a rule change
    made after reading the same round's labels removed): the round as it was labelled."""
    rounds: dict[str, dict[str, dict[str, int]]] = {}
    parts = sorted(LABELS.glob("round*_*.csv")) + (sorted(LABELS.glob("narrowed_round*.csv")) if with_narrowed else [])
    for part in parts:
        m = re.match(r"(?:narrowed_)?round(\d+)", part.name)
        if not m:
            continue
        per_rule = rounds.setdefault(m.group(1), {})
        with part.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                label = (row.get("label") or "").strip().upper()
                if not label:
                    continue
                if label not in VALID:
                    raise SystemExit(f"{part.name}: row {row.get('id')}: label {label!r} is not one of {VALID}")
                if not (row.get("reason") or "").strip():
                    raise SystemExit(f"{part.name}: row {row.get('id')}: labelled {label} without a reason "
                                     "(the standard asks one line per finding: CONTRIBUTING.md, Labelling findings)")
                counts = per_rule.setdefault(row["code"], dict.fromkeys(VALID, 0))
                counts[label] += 1
    return {r: dict(sorted(v.items())) for r, v in sorted(rounds.items(), key=lambda kv: int(kv[0]))}


def precision(counts: dict[str, int]) -> float | None:
    n = sum(counts.values())
    return counts["TP"] / n if n else None


def summary() -> dict:
    rounds = load_rounds()
    whole = load_rounds(with_narrowed=True)
    # rounds whose rules were narrowed from their own labels: the figures as labelled, per rule
    # that changed (the "rounds" figures count only the findings the current rules still report)
    as_labelled = {rnd: {code: c for code, c in per_rule.items() if rounds.get(rnd, {}).get(code) != c}
                   for rnd, per_rule in whole.items()}
    as_labelled = {rnd: per_rule for rnd, per_rule in as_labelled.items() if per_rule}
    return {"about": "hand-labelled findings on the real-world corpus (benchmarks/realworld/); TP / labelled",
            "rounds": rounds,
            "as_labelled": as_labelled,
            "ground_truth": ground_truth()}


def ground_truth() -> dict[str, dict[str, int]]:
    """{code: {"TP", "FP"}} of the compile-break rules, judged by running the freshcode programs."""
    from tritonify.diagnostics.registry import all_rules

    if not GROUND_TRUTH.is_file():
        return {}
    measured = json.loads(GROUND_TRUTH.read_text(encoding="utf-8"))["summary"].get("rule_precision", {})
    breaks = {reg.code for reg in all_rules() if reg.rule.compile_break}
    return {code: counts for code, counts in measured.items() if code in breaks}


def _default_set_line(code: str, measured: bool, truth: dict | None = None) -> str:
    from tritonify.diagnostics.registry import get_rule

    reg = get_rule(code)
    if reg is None:
        return ""
    if reg.rule.default and truth:
        return (f"**In the default set:** yes, by its precision against ground truth ({precision(truth):.0%} of "
                f"{sum(truth.values())} programs, below).")
    if reg.rule.default:
        return "**In the default set:** yes."
    why = (reg.rule.opt_in_because if reg.rule.opt_in_because else
           "its measured precision is under the 90% the default set requires" if measured else
           "it has not been measured yet, and the default set takes only rules measured at 90% or more")
    return f"**In the default set:** no, opt-in (`select = [\"{code}\"]` or `[\"ALL\"]` turns it on): {why}."


def page_section(code: str, data: dict) -> str:
    lines = ["<!-- precision:start -->", "## Measured precision", ""]
    rows = []
    for rnd, per_rule in data["rounds"].items():
        c = per_rule.get(code)
        before = data.get("as_labelled", {}).get(rnd, {}).get(code)
        if before:
            n = sum(before.values())
            rows.append(f"| {rnd}, as labelled (blind) | {n} | {before['TP']} | {before['FP']} | {before['NOISE']} | "
                        f"{precision(before):.0%} |")
        if c:
            n = sum(c.values())
            label = f"{rnd}, after narrowing from its labels" if before else rnd
            rows.append(f"| {label} | {n} | {c['TP']} | {c['FP']} | {c['NOISE']} | {precision(c):.0%} |")
    truth = data.get("ground_truth", {}).get(code)
    if line := _default_set_line(code, measured=bool(rows) or bool(truth), truth=truth):
        lines += [line, ""]
    if truth:
        lines += ["Against ground truth (`results/freshcode/`: freshly written TritonBench-T programs run on the H200",
                  "with Triton 3.6, every rule selected): the rule named the compiler's cause in "
                  f"{truth['TP']} rejected programs and gave an error in {truth['FP']} of the programs that compiled "
                  f"and ran: **{precision(truth):.0%}**. (A compile break in a kernel nothing launches is a warning, "
                  "not counted.)", ""]
    if rows:
        lines += ["Hand-labelled findings on the real-world corpus (`benchmarks/realworld/`: pinned PyPI",
                  "packages that ship Triton kernels; labels in `benchmarks/realworld/labels/`), by the written",
                  "standard (CONTRIBUTING.md, \"Labelling findings\": TP only where the author would act).", "",
                  "| round | labelled | TP | FP | NOISE | precision |", "| --- | --- | --- | --- | --- | --- |", *rows]
    else:
        lines.append("Not measured: the rule had no finding in the labelled samples of the real-world corpus.")
    lines.append("<!-- precision:end -->")
    return "\n".join(lines) + "\n"


def render_page(text: str, code: str, data: dict) -> str:
    body = SECTION.sub("", text).rstrip("\n")
    return body + "\n\n" + page_section(code, data)


def main(argv: list[str]) -> int:
    data = summary()
    new_json = json.dumps(data, indent=1, sort_keys=False) + "\n"
    stale = []
    if not OUT.is_file() or OUT.read_text(encoding="utf-8") != new_json:
        stale.append(OUT)
        if "--check" not in argv:
            OUT.write_text(new_json, encoding="utf-8")
    for page in sorted(PAGES.glob("*.md")):
        code = page.stem
        old = page.read_text(encoding="utf-8")
        new = render_page(old, code, data)
        if new != old:
            stale.append(page)
            if "--check" not in argv:
                page.write_text(new, encoding="utf-8")
    if "--check" in argv:
        if stale:
            print("stale (run python benchmarks/realworld/precision.py): " + ", ".join(p.name for p in stale), file=sys.stderr)
            return 1
        return 0
    for rnd, per_rule in data["rounds"].items():
        for code, c in per_rule.items():
            print(f"round {rnd} {code}: {sum(c.values()):3d} labelled, TP {c['TP']:3d} FP {c['FP']:3d} NOISE {c['NOISE']:3d}  {precision(c):.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
