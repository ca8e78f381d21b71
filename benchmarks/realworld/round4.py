"""Round 4 of the real-world study: the default rule set as a user meets it, labelled blind.

One command reproduces the round on a corpus built by `corpus.py`:

    python benchmarks/realworld/round4.py [--corpus DIR]            # lint, sample, join labels, print
    python benchmarks/realworld/round4.py --corpus DIR --write      # also (re)write labels/round4_default.csv

What it does:
1. lints every `.py` file of the corpus with no configuration (`Settings()`: the default set,
   what `tritonify check` does in a project without `[tool.tritonify]`), each package in its own
   tree with the workspace index, and counts the Triton kernels the engine finds;
2. draws a stratified sample with a fixed seed (`sample.draw`): `PER_RULE` findings of every default
   rule, all of them where a rule has fewer;
3. joins labels by (path, line, code) from every `labels/round4_*.csv`, so labels given once carry
   over when the sample is drawn again on a merged tree (a new rule's rows come with empty labels),
   and keeps every labelled finding the tree still reports even where the new draw misses it;
4. prints, per rule: findings, labelled, TP/FP/NOISE, precision, and the estimated true findings
   per 1,000 kernels (each rule's findings times its measured precision).

Labels follow the written standard (CONTRIBUTING.md, "Labelling findings"): TP when the author
would act on it (a real bug, a measured cost on the target, a Liger op the project could call
instead); FP when the hazard is not there; NOISE when it is true but unwanted, including hygiene
that every backend resolves the same way.
"""
from __future__ import annotations

import argparse
import ast
import csv
import os
import sys
import warnings
from collections import Counter
from pathlib import Path

from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.registry import all_rules
from tritonify.diagnostics.settings import Settings
from tritonify.diagnostics.triton_ast import ImportMap, find_kernels
from tritonify.diagnostics.workspace_index import default_index

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from corpus import corpus_files, default_dest  # noqa: E402
from sample import COLUMNS, draw  # noqa: E402

LABELS = HERE / "labels"
OUT = LABELS / "round4_default.csv"
SEED = 4
PER_RULE = 20
QUOTA = {"TRI003": 30}   # the rule whose place in the default set issue 26 decides: a larger sample


def lint_corpus(corpus: Path) -> tuple[list[dict], int, int]:
    """(findings as dicts with corpus-relative paths, files, kernels)."""
    findings: list[dict] = []
    kernels = 0
    files = corpus_files(corpus)
    settings = Settings()
    index = default_index()
    for path in files:
        data = path.read_bytes()
        result = lint_text(data, str(path), settings, on_disk=True)
        rel = path.relative_to(corpus).as_posix()
        for f in result.findings:
            if f.code == "TRI000":
                continue
            findings.append({"code": f.code, "path": rel, "line": f.line, "column": f.column,
                             "severity": f.severity.value if hasattr(f.severity, "value") else str(f.severity),
                             "message": f.message})
        if b"jit" in data:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tree = ast.parse(data)
            except (SyntaxError, ValueError):
                continue
            kernels += len(find_kernels(tree, ImportMap(tree, workspace=index, path=str(path))))
    return findings, len(files), kernels


def existing_labels() -> dict[tuple[str, str, int], dict]:
    out = {}
    for part in sorted(LABELS.glob("round4_*.csv")):
        with part.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                if (row.get("label") or "").strip():
                    out[(row["code"], row["path"], int(row["line"]))] = row
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=Path(os.environ.get("TRITONIFY_CORPUS", default_dest())))
    ap.add_argument("--write", action="store_true", help=f"write the sample with joined labels to {OUT.name}")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus} (build it with benchmarks/realworld/corpus.py)", file=sys.stderr)
        return 2
    gems = args.corpus / "flag-gems" / "flag_gems"
    if gems.is_dir() and not (gems / "__init__.py").is_file():
        # corpus.py now keeps the modules that register aten implementations (flag_gems/__init__.py
        # makes flag-gems a provider of the ops, which TRI003 must see); an older build lacks them
        print(f"{args.corpus} was built before corpus.py kept aten registration modules: rebuild it with "
              f"`python benchmarks/realworld/corpus.py --dest {args.corpus}` (reuses the downloads)", file=sys.stderr)
        return 2
    findings, files, kernels = lint_corpus(args.corpus)
    by_rule = Counter(f["code"] for f in findings)
    default_codes = sorted(r.rule.code for r in all_rules() if r.rule.default)
    sample = draw(findings, size=sum(min(n, QUOTA.get(c, PER_RULE)) for c, n in by_rule.items()), seed=SEED,
                  min_per_rule=PER_RULE, fixed=QUOTA)
    labels = existing_labels()
    # a finding labelled before stays in the round while the tree still reports it, even where a
    # changed tree draws another sample: no label is lost to a re-draw
    drawn = {(f["code"], f["path"], f["line"]) for f in sample}
    sample += [f for f in findings if (f["code"], f["path"], f["line"]) in labels
               and (f["code"], f["path"], f["line"]) not in drawn]
    sample.sort(key=lambda f: (f["code"], f["path"], f["line"]))
    rows = []
    for i, f in enumerate(sample, 1):
        old = labels.get((f["code"], f["path"], f["line"]), {})
        rows.append({"id": i, "code": f["code"], "path": f["path"], "line": f["line"], "severity": f["severity"],
                     "label": old.get("label", ""), "reason": old.get("reason", ""), "message": f["message"]})
    if args.write:
        with OUT.open("w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, COLUMNS, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
    print(f"corpus {args.corpus}: {files} files, {kernels} kernels; default set: {', '.join(default_codes)}")
    print("| rule | findings | labelled | TP | FP | NOISE | precision | true findings per 1,000 kernels (est.) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    total_true = 0.0
    for code in default_codes:
        n = by_rule.get(code, 0)
        got = Counter(r["label"] for r in rows if r["code"] == code and r["label"])
        labelled = sum(got.values())
        prec = got["TP"] / labelled if labelled else None
        true = n * prec if prec is not None else 0.0
        total_true += true
        shown = f"{prec:.0%}" if prec is not None else "-"
        print(f"| {code} | {n} | {labelled} | {got['TP']} | {got['FP']} | {got['NOISE']} | {shown} | "
              f"{true / kernels * 1000 if kernels else 0:.1f} |")
    unlabelled = sum(1 for r in rows if not r["label"])
    print(f"| all | {len(findings)} | {len(rows) - unlabelled} | | | | | {total_true / kernels * 1000 if kernels else 0:.1f} |")
    if unlabelled:
        print(f"{unlabelled} sampled findings have no label yet ({OUT.name})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
