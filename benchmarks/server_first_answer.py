"""How soon the lint worker answers a keystroke with its first answer, against its whole answer
(a benchmark, not a test).

Run: `python benchmarks/server_first_answer.py [--file PATH] [--statements 20] [--clock wall|cpu] [--out results/server_first_answer.md]`.
In this process, as the lint worker does it (server.lint_worker.lint_with_kernels, no pipe): the
file is linted in full once, then `tl.device_print("typed i", i_t)` is typed key by key into its
largest kernel (one version per key, the text as an editor has it after each key), each version
linted incrementally as while typing, until `--statements` keys got a first answer (the key that
completes a statement: TRI022 then reports it). For those keys it records when the first answer (the
statement-scope findings of what was typed, the others carried over) was handed over and when the
whole answer was; the baseline is the whole answer of the same lint, so the ratio is what the
first answer saves on this machine at its load of the moment (printed with it). Also timed: the
confirming full lint of the last version (which parses nothing: the version was parsed already).
Default file: fla's 815-line parallax kernels in the real-world corpus (TRITONIFY_CORPUS).
`--clock cpu` times each lint by this thread's CPU time (time.thread_time) instead of the wall clock:
on a machine other jobs load, what a lint costs rather than how long it waited for a core (for an
A/B of two trees, run with each tree's interpreter one after the other).
"""
from __future__ import annotations

import argparse
import ast
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from tritonify.diagnostics.settings import Settings
from tritonify.server import lint_worker

CORPUS = Path(os.environ.get("TRITONIFY_CORPUS", Path.home() / ".cache" / "tritonify-realworld"))
PARALLAX = CORPUS / "fla-core" / "fla" / "ops" / "parallax" / "parallel.py"
STATEMENT = 'tl.device_print("typed {i}", i_t)'


def _largest_kernel_line(text: str) -> tuple[int, int]:
    """(line, indentation) of the last statement of the file's largest jit function."""
    tree = ast.parse(text)
    kernels = [n for n in tree.body if isinstance(n, ast.FunctionDef)
               and any("jit" in ast.unparse(d) for d in n.decorator_list)]
    biggest = max(kernels, key=lambda n: (n.end_lineno or n.lineno) - n.lineno)
    last = biggest.body[-1]
    return last.end_lineno or last.lineno, last.col_offset


def measure(path: Path, statements: int, clock=time.perf_counter) -> dict:
    text = path.read_text()
    name = str(path)
    settings = Settings()
    lint_worker.lint_with_kernels(text, name, settings, "full")
    line, indent = _largest_kernel_line(text)
    lines = text.split("\n")
    firsts, wholes, got_first = [], [], 0
    typed_keys = 0
    statement_no = 0
    while got_first < statements:
        statement = STATEMENT.format(i=statement_no)
        statement_no += 1
        for n in range(1, len(statement) + 1):
            typed_keys += 1
            edited = "\n".join(lines[:line] + [" " * indent + statement[:n]] + lines[line:])
            seen: list[float] = []
            start = clock()
            lint_worker.lint_with_kernels(edited, name, settings, "incremental",
                                          first_answer=lambda _: seen.append(clock()))
            end = clock()
            if seen:
                got_first += 1
                firsts.append((seen[0] - start) * 1000)
                wholes.append((end - start) * 1000)
        lines = lines[:line] + [" " * indent + statement] + lines[line:]
        line += 1
    last = "\n".join(lines)
    lint_worker.lint_with_kernels(last, name, settings, "incremental")   # the last key's version, as typed
    parses = lint_worker.PARSE_COUNT[0]
    start = clock()
    lint_worker.lint_with_kernels(last, name, settings, "full")   # the confirming lint once typing pauses
    confirm = (clock() - start) * 1000
    assert lint_worker.PARSE_COUNT[0] == parses, "the confirming lint parsed the version again"
    return {"keys": typed_keys, "first_answers": got_first, "first_ms": firsts, "whole_ms": wholes,
            "confirm_ms": confirm, "load": os.getloadavg()[0]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", type=Path, default=PARALLAX)
    ap.add_argument("--statements", type=int, default=20)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="time each lint by the wall clock (perf_counter) or by this thread's CPU time (thread_time)")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    if not args.file.is_file():
        print(f"{args.file}: not found (build the corpus: benchmarks/realworld/corpus.py)", file=sys.stderr)
        return 2
    m = measure(args.file, args.statements, time.thread_time if args.clock == "cpu" else time.perf_counter)
    if not m["first_ms"]:
        print("no key got a first answer", file=sys.stderr)
        return 1
    p50_first, p50_whole = statistics.median(m["first_ms"]), statistics.median(m["whole_ms"])
    lines = [
        "# The lint worker's first answer against its whole answer (benchmarks/server_first_answer.py)",
        "",
        f"{time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}; {platform.machine()}, {os.cpu_count()} CPUs shared with "
        f"other jobs, load average (1 min) {m['load']:.2f} at the end; Python {platform.python_version()}; "
        f"`{args.file.name}` ({len(args.file.read_text().splitlines())} lines), {m['keys']} keys of "
        "`tl.device_print(\"typed i\", i_t)` typed into its largest kernel, each version linted incrementally in "
        "this process as the lint worker does (no pipe); "
        + ("time.thread_time (this thread's CPU time)" if args.clock == "cpu" else "time.perf_counter") + " around each lint.",
        "",
        f"{m['first_answers']} of {m['keys']} keys got a first answer (the others changed no statement-scope "
        "finding: only the whole answer is sent).",
        "",
        "| answer | p50 ms | p95 ms |",
        "| --- | --- | --- |",
        f"| first (statement-scope findings of what was typed, the rest carried over) | {p50_first:.1f} | "
        f"{sorted(m['first_ms'])[int(len(m['first_ms']) * 0.95) - 1 if len(m['first_ms']) > 1 else 0]:.1f} |",
        f"| whole (the same lint's end: the baseline) | {p50_whole:.1f} | "
        f"{sorted(m['whole_ms'])[int(len(m['whole_ms']) * 0.95) - 1 if len(m['whole_ms']) > 1 else 0]:.1f} |",
        "",
        f"First answer / whole answer, p50: **{p50_first / p50_whole:.2f}**. The confirming full lint of the last "
        f"version (in the same worker, after its incremental lint: it parses nothing): {m['confirm_ms']:.0f} ms.",
    ]
    page = "\n".join(lines) + "\n"
    print(page)
    if args.out:
        Path(args.out).write_text(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
