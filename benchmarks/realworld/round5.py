"""Round 5 of the real-world study: the default set (and the rules proposed for it), labelled blind.

Round 4 was labelled by the people who had changed the rules. Round 5 separates the two: this
script writes the findings as items that carry no label and no opinion, a labeller who reads only
CONTRIBUTING.md's standard ("Labelling findings") and the items writes the labels, and the script
joins them back.

    python benchmarks/realworld/round5.py items [--corpus DIR] [--out FILE] [--since FILE]
        lint the corpus, draw the round, write one JSON object per finding (id, code, message,
        file, line, excerpt); `--since` an earlier items file: write only the findings it lacks
        (a delta list, ids continuing after its last)
    python benchmarks/realworld/round5.py join LABELS.jsonl [ITEMS.jsonl ...] [--counts FILE] [--write]
        join the labeller's lines (id, label TP/NOISE/FP, reason) to the items (only those the
        tree still reports, where `--counts` is an `items` run on the current tree) and print, per rule,
        findings, labelled, TP/FP/NOISE, precision and the true findings per 1,000 kernels
        (each rule's findings times its measured precision); `--write` writes
        labels/round5_default.csv (the items the tree still reports), which precision.py reads, and
        labels/narrowed_round5.csv (labelled items a later rule change removed: precision.py shows
        them as the round "as labelled", beside the figures after the change)

What is linted: every `.py` file of the corpus with no configuration (`Settings()`, what
`tritonify check` does in a project without `[tool.tritonify]`), plus the opt-in rules that issue 26
proposes for the default set (`CANDIDATES`), so that one blind round decides their place. The draw:
every finding of a rule with fewer than `PER_RULE`, else a fixed-seed sample of `PER_RULE`
(`QUOTA` gives a rule more). The excerpt is the function that holds the finding (the whole kernel)
and, when the file launches that kernel, the launching function, numbered, at most `MAX_LINES` lines.
"""
from __future__ import annotations

import argparse
import ast
import csv
import json
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
OUT_CSV = LABELS / "round5_default.csv"
NARROWED_CSV = LABELS / "narrowed_round5.csv"   # labelled items the rules no longer report
BLIND = Path("/work/helpers/blind")
SEED = 5
PER_RULE = 20
QUOTA = {"TRI003": 40}          # TRI003's place in the default set is issue 26's question: all of them
# Opt-in rules whose certain part issue 26 asks to promote (item 5) or whose launch context it
# asks to read (item 4): measured in the same blind round.
CANDIDATES = ("TRI011", "TRI016", "TRI020", "TRI010")
MAX_LINES = 150


def default_codes() -> list[str]:
    return sorted(r.rule.code for r in all_rules() if r.rule.default)


def lint_corpus(corpus: Path, codes: tuple[str, ...]) -> tuple[list[dict], int, int]:
    """(findings of `codes` as dicts with corpus-relative paths, files, kernels)."""
    findings: list[dict] = []
    kernels = 0
    files = corpus_files(corpus)
    settings = Settings(select=codes)
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


# ---- excerpts ------------------------------------------------------------------------------------
def _functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _holder(funcs: list[ast.FunctionDef], line: int) -> ast.FunctionDef | None:
    """The innermost function whose lines (decorators included) hold `line`."""
    best = None
    for f in funcs:
        start = min([f.lineno, *(d.lineno for d in f.decorator_list)])
        if start <= line <= (f.end_lineno or f.lineno):
            if best is None or start >= min([best.lineno, *(d.lineno for d in best.decorator_list)]):
                best = f
    return best


def _span(f: ast.FunctionDef) -> tuple[int, int]:
    return min([f.lineno, *(d.lineno for d in f.decorator_list)]), f.end_lineno or f.lineno


def _launchers(tree: ast.Module, funcs: list[ast.FunctionDef], name: str) -> list[tuple[int, int]]:
    """Spans of the functions (or module-level lines) that launch `name[grid](...)` or call `name(...)`."""
    out: list[tuple[int, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func.value if isinstance(node.func, ast.Subscript) else node.func
        if not (isinstance(func, ast.Name) and func.id == name or isinstance(func, ast.Attribute) and func.attr == name):
            continue
        holder = _holder(funcs, node.lineno)
        span = _span(holder) if holder is not None else (node.lineno, node.end_lineno or node.lineno)
        if holder is not None and holder.name == name:
            continue  # a recursive mention inside the kernel itself
        if span not in out:
            out.append(span)
    return out


def excerpt(text: str, line: int) -> str:
    """The numbered source a labeller reads: the function holding `line` (a kernel: the whole of
    it) and the functions that launch it in this file, at most MAX_LINES lines; a window around the
    line where no function holds it. `>>` marks the finding's line."""
    lines = text.splitlines()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError):
        tree = None
    spans: list[tuple[int, int]] = []
    if tree is not None:
        funcs = _functions(tree)
        holder = _holder(funcs, line)
        if holder is not None:
            # a nested function: show the outermost one that holds it (its launcher is often the outer body)
            spans.append(_span(holder))
            spans += _launchers(tree, funcs, holder.name)
    if not spans:
        spans = [(max(1, line - 30), min(len(lines), line + 30))]
    budget = MAX_LINES
    parts: list[str] = []
    for i, (a, b) in enumerate(spans):
        if budget <= 0:
            parts.append(f"... ({len(spans) - i} more launch site(s) left out)")
            break
        if b - a + 1 > budget:
            if i == 0:   # the finding's own function: keep the window around the line
                half = budget // 2
                a = max(a, min(line - half, b - budget + 1))
                b = a + budget - 1
            else:
                b = a + budget - 1
        chunk = [f"{'>>' if n == line else '  '}{n:5d} | {lines[n - 1]}" for n in range(a, min(b, len(lines)) + 1)]
        budget -= len(chunk)
        if parts:
            parts.append("    ...")
        parts += chunk
    return "\n".join(parts)


# ---- items ---------------------------------------------------------------------------------------
def draw_round(findings: list[dict]) -> list[dict]:
    by_rule = Counter(f["code"] for f in findings)
    size = sum(min(n, QUOTA.get(c, PER_RULE)) for c, n in by_rule.items())
    return draw(findings, size=size, seed=SEED, min_per_rule=PER_RULE, fixed=QUOTA)


def make_items(corpus: Path, sample: list[dict], start: int = 1) -> list[dict]:
    items = []
    texts: dict[str, str] = {}
    for i, f in enumerate(sample, start):
        text = texts.get(f["path"])
        if text is None:
            text = texts[f["path"]] = (corpus / f["path"]).read_text(encoding="utf-8", errors="replace")
        items.append({"id": f"r5-{i:04d}", "code": f["code"], "message": f["message"], "file": f["path"],
                      "line": f["line"], "excerpt": excerpt(text, f["line"])})
    return items


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def cmd_items(args) -> int:
    corpus = args.corpus
    if not corpus.is_dir():
        print(f"no corpus at {corpus} (build it with benchmarks/realworld/corpus.py)", file=sys.stderr)
        return 2
    codes = tuple(default_codes()) + CANDIDATES
    findings, files, kernels = lint_corpus(corpus, codes)
    sample = draw_round(findings)
    start = 1
    if args.since:
        old = []
        for p in args.since:
            old += read_jsonl(p)
        seen = {(o["code"], o["file"], o["line"]) for o in old}
        start = max(int(o["id"].split("-")[1]) for o in old) + 1 if old else 1
        # a delta: every finding of the new draw that the earlier lists do not hold
        sample = [f for f in sample if (f["code"], f["path"], f["line"]) not in seen]
    items = make_items(corpus, sample, start)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps(item) + "\n")
    by_rule = Counter(f["code"] for f in findings)
    drawn = Counter(i["code"] for i in items)
    print(f"corpus {corpus}: {files} files, {kernels} kernels; {len(findings)} findings; "
          f"{len(items)} items -> {args.out}")
    for code in sorted(set(by_rule) | set(codes)):
        tag = "default" if code in default_codes() else "candidate"
        print(f"  {code} ({tag}): {by_rule.get(code, 0)} findings, {drawn.get(code, 0)} items")
    (args.out.with_suffix(".counts.json")).write_text(json.dumps(
        {"files": files, "kernels": kernels, "findings": dict(sorted(by_rule.items())),
         "keys": sorted([f["code"], f["path"], f["line"]] for f in findings)}) + "\n")
    return 0


def _rows(items: list[dict], labels: dict[str, dict]) -> list[dict]:
    from tritonify.diagnostics.registry import get_rule

    rows = []
    for it in items:
        lab = labels.get(it["id"], {})
        reg = get_rule(it["code"])
        rows.append({"id": it["id"], "code": it["code"], "path": it["file"], "line": it["line"],
                     "severity": reg.rule.severity.value if reg is not None else "",
                     "label": (lab.get("label") or "").strip().upper(), "reason": (lab.get("reason") or "").strip(),
                     "message": it["message"]})
    return rows


def _write_rows(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def cmd_join(args) -> int:
    labels = {r["id"]: r for r in read_jsonl(args.labels)}
    items: list[dict] = []
    for p in args.items:
        items += read_jsonl(p)
    counts = json.loads(args.counts.read_text(encoding="utf-8")) if args.counts else None
    if counts and "keys" in counts:
        # items whose finding the tree no longer reports (a rule narrowed after the list was
        # written) leave the round; their labels stay in the labeller's file
        current = {tuple(k) for k in counts["keys"]}
        gone = [it for it in items if (it["code"], it["file"], it["line"]) not in current]
        items = [it for it in items if (it["code"], it["file"], it["line"]) in current]
        if gone:
            print(f"{len(gone)} items are no longer reported by the tree: " + ", ".join(i["id"] for i in gone))
            if args.write:
                # kept as evidence of what the narrowing removed, outside the round's precision
                # (precision.py reads labels/round<N>_*.csv only)
                _write_rows(getattr(args, "narrowed_csv", NARROWED_CSV), _rows(gone, labels))
    rows = _rows(items, labels)
    if args.write:
        _write_rows(getattr(args, "out_csv", OUT_CSV), rows)
    kernels = counts["kernels"] if counts else 0
    found = counts["findings"] if counts else Counter(r["code"] for r in rows)
    print("| rule | default | findings | labelled | TP | FP | NOISE | precision | true findings per 1,000 kernels |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    defaults = set(default_codes())
    total = 0.0
    for code in sorted({r["code"] for r in rows}):
        got = Counter(r["label"] for r in rows if r["code"] == code and r["label"])
        labelled = sum(got.values())
        prec = got["TP"] / labelled if labelled else None
        true = found.get(code, 0) * prec if prec is not None else 0.0
        if code in defaults:
            total += true
        per_k = f"{true / kernels * 1000:.1f}" if kernels else "-"
        print(f"| {code} | {'yes' if code in defaults else 'no'} | {found.get(code, 0)} | {labelled} | {got['TP']} | "
              f"{got['FP']} | {got['NOISE']} | {f'{prec:.0%}' if prec is not None else '-'} | {per_k} |")
    if kernels:
        print(f"default set: {total:.0f} true findings (est.) in {kernels} kernels = {total / kernels * 1000:.1f} per 1,000")
    missing = sum(1 for r in rows if not r["label"])
    if missing:
        print(f"{missing} items have no label")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    it = sub.add_parser("items")
    it.add_argument("--corpus", type=Path, default=Path(os.environ.get("TRITONIFY_CORPUS", default_dest())))
    it.add_argument("--out", type=Path, default=BLIND / "round5_items.jsonl")
    it.add_argument("--since", type=Path, action="append", default=[])
    jn = sub.add_parser("join")
    jn.add_argument("labels", type=Path)
    jn.add_argument("items", type=Path, nargs="*", default=[BLIND / "round5_items.jsonl"])
    jn.add_argument("--counts", type=Path, help="the counts file `items` wrote (findings and kernels of the round)")
    jn.add_argument("--write", action="store_true", help=f"write {OUT_CSV.name}")
    args = ap.parse_args(argv)
    return cmd_items(args) if args.cmd == "items" else cmd_join(args)


if __name__ == "__main__":
    raise SystemExit(main())
