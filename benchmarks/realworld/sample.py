"""Draw a stratified sample of lint findings on the real-world corpus, for labelling by hand.

    tritonify check <corpus> --select ALL --format json > findings.json   (run inside the corpus)
    python benchmarks/realworld/sample.py findings.json --size 220 --seed 1 > labels/roundN.csv

Every rule gets at least `--min-per-rule` findings (all of them when it has fewer); the rest of
the sample is spread over rules by volume, except rules given their own `--quota CODE=N`. The CSV has empty `label` and `reason` columns for the
labeller, who follows the written standard (CONTRIBUTING.md, "Labelling findings"): TP where the
author would act (a real bug, a measured cost on the target, a Liger op the project could call
instead), FP (the hazard is not there, or cannot happen here), NOISE (true but unwanted:
intentional, once per row, cosmetic, a duplicate, or spec hygiene every backend resolves the same
way). `round4.py` draws the default-set round with this module and joins earlier labels.
"""
from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from collections import defaultdict

COLUMNS = ["id", "code", "path", "line", "severity", "label", "reason", "message"]


def draw(findings: list[dict], size: int, seed: int, min_per_rule: int,
         fixed: dict[str, int] | None = None) -> list[dict]:
    """`fixed` gives some rules their own quota (e.g. more rows for a rule whose place in the default
    set is being decided); the rest of `size` is spread as above over the other rules."""
    by_rule: dict[str, list[dict]] = defaultdict(list)
    for f in findings:
        by_rule[f["code"]].append(f)
    rng = random.Random(seed)
    fixed = fixed or {}
    quota = {code: min(len(fs), fixed.get(code, min_per_rule)) for code, fs in by_rule.items()}
    left = size - sum(quota.values())
    total = sum(len(fs) for fs in by_rule.values())
    # the rest by volume (largest remainder), never more than a rule has
    while left > 0:
        spare = {c: len(fs) - quota[c] for c, fs in by_rule.items() if len(fs) > quota[c] and c not in fixed}
        if not spare:
            break
        share = {c: len(by_rule[c]) / total * size - quota[c] for c in spare}
        code = max(share, key=lambda c: (share[c], c))
        quota[code] += 1
        left -= 1
    out = []
    for code in sorted(by_rule):
        fs = sorted(by_rule[code], key=lambda f: (f["path"], f["line"], f["column"]))
        out += rng.sample(fs, quota[code])
    out.sort(key=lambda f: (f["code"], f["path"], f["line"]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("findings", help="JSON from `tritonify check --format json`")
    ap.add_argument("--size", type=int, default=220)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-per-rule", type=int, default=5)
    ap.add_argument("--exclude", action="append", default=[],
                    help="a labels CSV whose findings (code, path, line) are not drawn again (a new sample)")
    ap.add_argument("--quota", action="append", default=[], metavar="CODE=N",
                    help="draw N findings of CODE (all when it has fewer) instead of its share by volume")
    args = ap.parse_args(argv)
    fixed = {}
    for q in args.quota:
        code, _, n = q.partition("=")
        fixed[code.strip()] = int(n)
    seen = set()
    for path in args.exclude:
        with open(path, encoding="utf-8", newline="") as fh:
            seen |= {(r["code"], r["path"], int(r["line"])) for r in csv.DictReader(fh)}
    with open(args.findings, encoding="utf-8") as fh:
        findings = [f for f in json.load(fh)
                    if f["code"] != "TRI000" and (f["code"], f["path"], f["line"]) not in seen]
    w = csv.DictWriter(sys.stdout, COLUMNS, lineterminator="\n")
    w.writeheader()
    for i, f in enumerate(draw(findings, args.size, args.seed, args.min_per_rule, fixed), 1):
        w.writerow({"id": i, "code": f["code"], "path": f["path"], "line": f["line"],
                    "severity": f["severity"], "label": "", "reason": "", "message": f["message"]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
