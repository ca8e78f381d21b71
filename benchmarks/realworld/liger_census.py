"""Census of TRI003's verdicts on the real-world corpus: every kernel, reported or why it is quiet.

Issue 26 asks for the true TRI003 findings the corpus holds. The findings themselves are measured
by the blind rounds (round6.py); this script answers the other half: of the kernels TRI003 leaves
quiet, which compute an op Liger-Kernel ships, and which of the policy's exceptions keeps each one
quiet. The verdicts are the rule's own (`tri003_liger_reimplementation.assess`, which `check`
reports from), so the census cannot drift from what the linter does; the only thing added here is
what the recogniser reads in each quiet kernel (`recognise(...).found`), to tell a kernel that
computes a Liger op from one that computes none.

    python benchmarks/realworld/liger_census.py [--corpus DIR] [--list REASON] [--jsonl FILE]

The table counts kernels per reason (`variant of `x`` reasons are grouped), with how many of them
compute a Liger op; `--list` prints `path:line kernel ops` for the reasons containing REASON
(case-blind), `--jsonl` writes one row per kernel. Files are linted with the default settings and
the process's workspace index, as `tritonify check` does; files out of the policy's scope (Liger's
tree, tests, NPU twins, providers) are counted by their file-level reason without reading kernels.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from corpus import corpus_files, default_dest  # noqa: E402

from tritonify.diagnostics.context import PythonContext  # noqa: E402
from tritonify.diagnostics.liger.recognise import recognise  # noqa: E402
from tritonify.diagnostics.liger.symbolic import build_graph  # noqa: E402
from tritonify.diagnostics.rules.triton.tri003_liger_reimplementation import RULE, assess  # noqa: E402
from tritonify.diagnostics.settings import Settings  # noqa: E402
from tritonify.diagnostics.source import SourceFile  # noqa: E402
from tritonify.diagnostics.workspace_index import default_index  # noqa: E402

REPORTED = "reported"
_NAMED = re.compile(r"`[^`]+`")


def _ops_read(ctx: PythonContext, kernel) -> list[str]:
    helpers = {k.name: k.node for k in ctx.kernels}
    graph = build_graph(kernel, ctx.imports, helpers)
    return list(recognise(graph).found) if graph is not None else []


def census(corpus: Path) -> list[dict]:
    rows: list[dict] = []
    settings = Settings()
    index = default_index()
    for path in corpus_files(corpus):
        data = path.read_bytes()
        if b"jit" not in data:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            source = SourceFile.from_text(data.decode("utf-8", errors="replace"), str(path))
            if source.syntax_error is not None:
                continue
            ctx = PythonContext(source, settings=settings, workspace=index)
            ctx.rule = RULE   # as the engine sets it before a rule's check
            rel = path.relative_to(corpus).as_posix()
            for kernel, finding, why in assess(ctx):
                if kernel is None:   # the whole file is out of scope: one row per kernel, no reading
                    rows += [{"path": rel, "line": k.node.lineno, "kernel": k.name, "reason": why,
                              "scope": "file", "ops": []} for k in ctx.kernels if not k.is_helper]
                    continue
                if kernel.is_helper:
                    continue
                ops = _ops_read(ctx, kernel) if finding is None else []
                rows.append({"path": rel, "line": kernel.node.lineno, "kernel": kernel.name,
                             "reason": REPORTED if finding is not None else why, "scope": "kernel", "ops": ops})
    return rows


def grouped(reason: str) -> str:
    return _NAMED.sub("`...`", reason)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=default_dest())
    ap.add_argument("--list", metavar="REASON", help="list the kernels whose reason contains REASON")
    ap.add_argument("--jsonl", type=Path, help="write one row per kernel")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus} (build it with benchmarks/realworld/corpus.py)", file=sys.stderr)
        return 2
    rows = census(args.corpus)
    if args.jsonl:
        args.jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    total = Counter(grouped(r["reason"]) for r in rows)
    with_op = Counter(grouped(r["reason"]) for r in rows if r["ops"])
    in_scope = [r for r in rows if r["scope"] == "kernel"]
    print(f"kernels: {len(rows)} ({len(in_scope)} in the policy's scope, "
          f"{sum(r['reason'] == REPORTED for r in rows)} reported)")
    print(f"{'kernels':>7} {'with op':>7}  reason")
    for reason, n in total.most_common():
        print(f"{n:7d} {with_op.get(reason, 0):7d}  {reason}")
    if args.list:
        needle = args.list.lower()
        for r in rows:
            if needle in r["reason"].lower():
                print(f"{r['path']}:{r['line']} {r['kernel']} {'+'.join(r['ops']) or '-'}  ({r['reason'][:90]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
