"""Round 6 of the real-world study: the default set after issue 26's changes, labelled blind.

Round 5 (round5.py) measured the default set and the rules proposed for it; its labels narrowed
TRI003, TRI026 (judged against the Triton the project runs: diagnostics/triton_api/target.py) and
TRI016 (launch context). Round 6 is the fresh round that decides the default set from here: the
same method (items without label or opinion, a labeller who reads only CONTRIBUTING.md's
"Labelling findings", the join), a larger draw, and excerpts that show more of how a kernel is
launched.

    python benchmarks/realworld/round6.py items [--corpus DIR] [--out FILE] [--since FILE]
        [--exclude ITEMS --only CODES --seed N --prefix rN]   (a later round: round 7 is
        `--exclude round6_items.jsonl --only TRI016 --seed 7 --prefix r7`)
    python benchmarks/realworld/round6.py join LABELS.jsonl [ITEMS.jsonl ...] [--counts FILE] [--write] [--round 7]

(what they do: round5.py's docstring; `--write` writes labels/round6_default.csv and
labels/narrowed_round6.csv). What is linted: every `.py` file of the corpus with no configuration
plus `CANDIDATES` (TRI016, whose place in the default set this round decides). The draw: every
finding of a rule with fewer than `PER_RULE`, else a fixed-seed sample of `PER_RULE` (`QUOTA`:
TRI016 30). The excerpt: the function that holds the finding (the whole kernel), the functions of
the file that launch it, and the launchers' callers in the rest of the project (`callers`: the
functions of other files of the same project that import the launcher's name and call it, two
hops), numbered, at most `MAX_LINES` lines.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
import warnings
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import round5  # noqa: E402
from corpus import default_dest  # noqa: E402
from sample import draw  # noqa: E402

LABELS = HERE / "labels"
OUT_CSV = LABELS / "round6_default.csv"
NARROWED_CSV = LABELS / "narrowed_round6.csv"
BLIND = round5.BLIND
SEED = 6
PER_RULE = 25
QUOTA = {"TRI016": 30}
CANDIDATES = ("TRI016",)
MAX_LINES = 180
CALLER_LINES = 25        # at most this many lines of one caller
PREFIX = "r6"


def _parse(text: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


class Project:
    """The files of one corpus project (its first path part), read once, for the callers."""

    def __init__(self, corpus: Path):
        self.corpus = corpus
        self.texts: dict[str, str] = {}
        self.trees: dict[str, ast.Module | None] = {}
        self._files: dict[str, list[str]] = {}

    def text(self, rel: str) -> str:
        if rel not in self.texts:
            self.texts[rel] = (self.corpus / rel).read_text(encoding="utf-8", errors="replace")
        return self.texts[rel]

    def tree(self, rel: str) -> ast.Module | None:
        if rel not in self.trees:
            self.trees[rel] = _parse(self.text(rel))
        return self.trees[rel]

    def files(self, rel: str) -> list[str]:
        top = rel.split("/")[0]
        if top not in self._files:
            self._files[top] = sorted(p.relative_to(self.corpus).as_posix()
                                      for p in (self.corpus / top).rglob("*.py"))
        return self._files[top]

    def callers(self, rel: str, name: str) -> list[tuple[str, ast.FunctionDef, int]]:
        """Functions of other files of the project that import the module that defines `name`
        and call it: (file, calling function, line of the call)."""
        out = []
        stem = Path(rel).stem
        word = re.compile(rf"\b{re.escape(name)}\s*\(")
        for other in self.files(rel):
            if other == rel:
                continue
            text = self.text(other)
            if name not in text or not word.search(text) or ("import" not in text):
                continue
            # the module that defines it is imported (`from .prefix_prefill import f`, `import pkg.mod`):
            # a function of the same name from another module is not this one
            if not re.search(rf"from\s+[\w.]*\b{re.escape(stem)}\s+import|import\s+[\w.]*\b{re.escape(stem)}\b|"
                             rf"from\s+[\w.]+\s+import\s[^\n]*\b{re.escape(stem)}\b", text):
                continue
            tree = self.tree(other)
            if tree is None:
                continue
            funcs = round5._functions(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    f = node.func
                    hit = isinstance(f, ast.Name) and f.id == name or isinstance(f, ast.Attribute) and f.attr == name
                    if hit:
                        holder = round5._holder(funcs, node.lineno)
                        if holder is not None and all(h is not holder for _, h, _ in out):
                            out.append((other, holder, node.lineno))
            if len(out) >= 3:
                break
        return out[:3]


def _numbered(lines: list[str], a: int, b: int, mark: int | None = None) -> list[str]:
    return [f"{'>>' if n == mark else '  '}{n:5d} | {lines[n - 1]}" for n in range(a, min(b, len(lines)) + 1)]


KERNEL_LINES = 90       # the finding's own function: a window of at most this many lines around the line
LAUNCHER_LINES = 35      # at most this many lines of one in-file launcher


def _window(a: int, b: int, line: int, size: int) -> tuple[int, int]:
    if b - a + 1 <= size:
        return a, b
    start = max(a, min(line - size // 2, b - size + 1))
    return start, start + size - 1


def excerpt(project: Project, rel: str, line: int) -> str:
    """The numbered source a labeller reads, `>>` on the finding's line: the function that holds
    the line (at most KERNEL_LINES around it), the functions of the file that launch or call it
    (LAUNCHER_LINES each), then their callers in other files of the project, two hops
    (CALLER_LINES each), within MAX_LINES. A window of 60 lines where no function holds the line."""
    text = project.text(rel)
    lines = text.splitlines()
    tree = project.tree(rel)
    funcs = round5._functions(tree) if tree is not None else []
    holder = round5._holder(funcs, line) if funcs else None
    if holder is None:
        return "\n".join(_numbered(lines, max(1, line - 30), min(len(lines), line + 30), line))
    parts: list[str] = []
    used = 0

    def add(title: str | None, src_lines: list[str], a: int, b: int, cap: int, end: int, mark: int | None = None,
            center: int | None = None) -> bool:
        nonlocal used
        if center is not None:
            head = a
            a, b = _window(a, b, center, cap)
            if a > head:
                title = f"{title}\n{'':9s}... ({a - head} lines of the function above)" if title else title
        else:
            a, b = _window(a, b, mark if mark is not None else a, cap) if mark is not None else (a, min(b, a + cap - 1))
        chunk = _numbered(src_lines, a, b, mark)
        if b < end:
            chunk.append(f"          ... ({end - b} more lines)")
        if used + len(chunk) + (1 if title else 0) > MAX_LINES:
            return False
        if title:
            parts.append(title)
        parts.extend(chunk)
        used += len(chunk) + (1 if title else 0)
        return True

    a, b = round5._span(holder)
    add(None, lines, a, b, KERNEL_LINES, b, line)
    launchers = []
    for la, lb in round5._launchers(tree, funcs, holder.name):
        fn = round5._holder(funcs, la)
        if not add("    ... launched or called in this file:", lines, la, lb, LAUNCHER_LINES, lb):
            parts.append("    ... (more launch sites in this file left out)")
            break
        if fn is not None and fn is not holder:
            launchers.append(fn.name)
    seen: set[tuple[str, int]] = set()
    frontier = [(rel, n) for n in (launchers or [holder.name])]
    for _hop in range(2):
        nxt = []
        for src, name in frontier:
            for other, fn, at in project.callers(src, name):
                key = (other, fn.lineno)
                if key in seen:
                    continue
                seen.add(key)
                fa, fb = round5._span(fn)
                if add(f"    ... called from {other} (`{name}(...)` in `{fn.name}`):", project.text(other).splitlines(),
                       fa, fb, CALLER_LINES, fb, center=at):
                    nxt.append((other, fn.name))
        frontier = nxt
    return "\n".join(parts)


def draw_round(findings: list[dict], seed: int = SEED) -> list[dict]:
    by_rule = Counter(f["code"] for f in findings)
    size = sum(min(n, QUOTA.get(c, PER_RULE)) for c, n in by_rule.items())
    fixed = {c: q for c, q in QUOTA.items() if c in by_rule}
    return draw(findings, size=size, seed=seed, min_per_rule=PER_RULE, fixed=fixed)


def cmd_items(args) -> int:
    corpus = args.corpus
    if not corpus.is_dir():
        print(f"no corpus at {corpus} (build it with benchmarks/realworld/corpus.py)", file=sys.stderr)
        return 2
    defaults = round5.default_codes()
    codes = tuple(defaults) + tuple(c for c in CANDIDATES if c not in defaults)
    if args.only:
        codes = tuple(args.only)
    findings, files, kernels = round5.lint_corpus(corpus, codes)
    population = findings
    if args.exclude:
        # a later round: the findings an earlier round labelled leave the population before the draw
        done = {(o["code"], o["file"], o["line"]) for p in args.exclude for o in round5.read_jsonl(p)}
        population = [f for f in findings if (f["code"], f["path"], f["line"]) not in done]
    sample = population if args.all else draw_round(population, args.seed)
    start = 1
    if args.since:
        old = [o for p in args.since for o in round5.read_jsonl(p)]
        seen = {(o["code"], o["file"], o["line"]) for o in old}
        start = max(int(o["id"].split("-")[1]) for o in old) + 1 if old else 1
        sample = [f for f in sample if (f["code"], f["path"], f["line"]) not in seen]
    project = Project(corpus)
    items = [{"id": f"{args.prefix}-{i:04d}", "code": f["code"], "message": f["message"], "file": f["path"],
              "line": f["line"], "excerpt": excerpt(project, f["path"], f["line"])}
             for i, f in enumerate(sample, start)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps(item) + "\n")
    by_rule = Counter(f["code"] for f in findings)
    drawn = Counter(i["code"] for i in items)
    print(f"corpus {corpus}: {files} files, {kernels} kernels; {len(findings)} findings; "
          f"{len(items)} items -> {args.out}")
    for code in sorted(set(by_rule) | set(codes)):
        tag = "default" if code in defaults else "candidate"
        print(f"  {code} ({tag}): {by_rule.get(code, 0)} findings, {drawn.get(code, 0)} items")
    args.out.with_suffix(".counts.json").write_text(json.dumps(
        {"files": files, "kernels": kernels, "findings": dict(sorted(by_rule.items())),
         "keys": sorted([f["code"], f["path"], f["line"]] for f in findings)}) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    it = sub.add_parser("items")
    it.add_argument("--corpus", type=Path, default=Path(os.environ.get("TRITONIFY_CORPUS", default_dest())))
    it.add_argument("--out", type=Path, default=BLIND / "round6_items.jsonl")
    it.add_argument("--since", type=Path, action="append", default=[])
    it.add_argument("--exclude", type=Path, action="append", default=[],
                    help="items of an earlier round: their findings are not drawn again (round 7: round 6's)")
    it.add_argument("--only", nargs="+", help="lint only these codes (round 7: TRI016)")
    it.add_argument("--seed", type=int, default=SEED)
    it.add_argument("--all", action="store_true",
                    help="every finding, no draw (round 9: a rule entering the default set is labelled whole)")
    it.add_argument("--prefix", default=PREFIX, help="id prefix (r6, r7)")
    jn = sub.add_parser("join")
    jn.add_argument("labels", type=Path)
    jn.add_argument("items", type=Path, nargs="*", default=[BLIND / "round6_items.jsonl"])
    jn.add_argument("--counts", type=Path, help="the counts file `items` wrote (findings and kernels of the round)")
    jn.add_argument("--write", action="store_true", help=f"write {OUT_CSV.name} and {NARROWED_CSV.name}")
    jn.add_argument("--round", type=int, default=6, help="which round's label files --write writes (7: round7_default.csv)")
    args = ap.parse_args(argv)
    if args.cmd == "items":
        return cmd_items(args)
    args.out_csv = LABELS / f"round{args.round}_default.csv"
    args.narrowed_csv = LABELS / f"narrowed_round{args.round}.csv"
    return round5.cmd_join(args)


if __name__ == "__main__":
    raise SystemExit(main())
