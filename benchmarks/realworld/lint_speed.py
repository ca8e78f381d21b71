"""Lint speed on the real-world corpus, against only parsing the same files with ast.parse.

Corpus: every .py file of the corpus built by `benchmarks/realworld/corpus.py` (default
`$TRITONIFY_CORPUS` or ~/.cache/tritonify-realworld), measured twice: with the default rule set
(what a user meets: `Settings()`) and with every rule (`select=["ALL"]`), each with a fresh
workspace index (so each first pass reads the imported modules again).
Everything runs in this one process: each file is parsed with `ast.parse` and then linted with
`lint_text`, back to back, in `--repeat` passes over the corpus, and each file keeps its fastest
parse and its fastest lint (the machine is shared: the minimum is the figure least disturbed by
other work, and parse and lint of a file see the same load). Linting also reads the modules a
file imports (the workspace index, once per process), which counts as lint time. Then the slowest files are linted again
stage by stage (parse, the shared setup, each rule, embedded CUDA) to say where their time goes.

    python benchmarks/realworld/lint_speed.py                  # prints Markdown, writes results/
    python benchmarks/realworld/lint_speed.py --repeat 1 --no-write --limit 200   # a quick look

Times are CPU seconds of this process (`time.process_time`), so other work on a shared machine
does not count; the cyclic garbage collector is paused inside both parse and lint timings, as
the engine pauses it while linting.

Targets (issue 13, item 6): total lint time at most 3x parse time; no file over 150 ms.
"""
from __future__ import annotations

import argparse
import ast
import gc
import json
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.registry import all_rules
from tritonify.diagnostics.settings import Settings
try:
    from tritonify.diagnostics.workspace_index import default_index
except ImportError:  # an engine from before the workspace index (measuring an old commit)
    default_index = None

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from corpus import corpus_files, default_dest  # noqa: E402

# CPU time of this process, not wall time: on a shared machine other work stretches wall time
# (parse and lint alike, but unevenly); the CPU this process spends is what a quiet machine takes.
CLOCK = time.process_time
RATIO_TARGET = 3.0
# as `tritonify check` reads files (an engine from before `on_disk` takes the text alone)
LINT = ((lambda data, path, settings: lint_text(data, path, settings, on_disk=True))
        if "on_disk" in lint_text.__code__.co_varnames else lint_text)
FIRST_PASS: list[float] = []  # lint seconds per file in the first pass: the index reads imported modules then
FILE_TARGET_MS = 150.0


def read_all(files: list[Path]) -> list[bytes]:
    return [p.read_bytes() for p in files]


def parse_and_lint_times(datas: list[bytes], paths: list[str], settings: Settings, repeat: int,
                         progress: bool, rows: list[tuple] | None = None) -> tuple[list[float], list[float], int, int]:
    """(fastest parse seconds per file, fastest lint seconds per file, findings, files the
    engine left unparsed). Each file is parsed and then linted back to back, so both see the
    same load on a shared machine. `rows`: the first pass's findings are appended to it as
    (code, path, line, column, message)."""
    parse = [float("inf")] * len(datas)
    lint = [float("inf")] * len(datas)
    findings = unparsed = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(repeat):
            for i, (data, path) in enumerate(zip(datas, paths)):
                gc.disable()  # as lint_text does for its own parse and rules: no collector pass inside either
                t0 = CLOCK()
                try:
                    ast.parse(data)
                except (SyntaxError, ValueError):
                    pass
                t1 = CLOCK()
                gc.enable()
                result = LINT(data, path, settings)
                t2 = CLOCK()
                parse[i] = min(parse[i], t1 - t0)
                lint[i] = min(lint[i], t2 - t1)
                if r == 0:
                    findings += len(result.findings)
                    unparsed += not getattr(result, "parsed", True)
                    FIRST_PASS.append(t2 - t1)
                    if rows is not None:
                        rows.extend((f.code, path, f.line, f.column, f.message) for f in result.findings)
            if progress:
                print(f"  pass {r + 1}/{repeat}: parse {sum(parse):.1f} s, lint {sum(lint):.1f} s (fastest so far)",
                      file=sys.stderr, flush=True)
    return parse, lint, findings, unparsed


def stage_times(data: bytes, path: str, settings: Settings, repeat: int) -> dict[str, float]:
    """Fastest seconds per stage of one file: parse, the shared setup (module walk, kernel
    list), each rule's check, embedded CUDA. A rule that first asks for a shared fact (a
    kernel's data flow) is charged for computing it; the rules after it get it free."""
    from tritonify.diagnostics.context import PythonContext
    from tritonify.diagnostics.engine import _embedded_cuda, _enabled_rules
    from tritonify.diagnostics.source import SourceFile

    best: dict[str, float] = {}

    def note(stage: str, dt: float) -> None:
        best[stage] = min(best.get(stage, float("inf")), dt)

    for _ in range(repeat):
        gc.disable()
        try:
            t0 = CLOCK()
            source = SourceFile.from_bytes(data, path)
            note("parse", CLOCK() - t0)
            if source.tree is None:
                continue
            ctx = (PythonContext(source, settings=settings, workspace=default_index()) if default_index
                   else PythonContext(source, settings=settings))
            t0 = CLOCK()
            _ = ctx.kernels, ctx.parents
            note("setup", CLOCK() - t0)
            for reg in _enabled_rules(settings, path, "python"):
                ctx.rule = reg.rule
                t0 = CLOCK()
                try:
                    list(reg.check(ctx))
                except Exception:  # the engine logs and goes on; so does the benchmark
                    pass
                note(reg.code, CLOCK() - t0)
            t0 = CLOCK()
            _embedded_cuda(source, settings)
            note("cuda", CLOCK() - t0)
        finally:
            gc.enable()
    return best


def fresh_index() -> None:
    """A new process-wide workspace index: the next pass reads imported modules again."""
    if default_index is None:
        return
    import tritonify.diagnostics.workspace_index as workspace_index

    workspace_index._DEFAULT = None


def big_file(root: Path, lines: int = 3000) -> str:
    """A 3,000-line kernel file: Liger-Kernel's ops of the corpus laid end to end (the file
    issue 2's re-lint target was measured on)."""
    ops = sorted((root / "liger-kernel" / "liger_kernel" / "ops").rglob("*.py"))
    parts, n = [], 0
    for p in ops:
        text = "\n".join(l for l in p.read_text(encoding="utf-8").splitlines() if not l.startswith("from __future__"))
        parts.append(text)
        n += text.count("\n") + 1
        if n >= lines:
            break
    return "\n".join("\n".join(parts).splitlines()[:lines]) + "\n"


def best_and_median(fn, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t0 = CLOCK()
        fn()
        times.append(CLOCK() - t0)
    return min(times), statistics.median(times)


def lines_of(data: bytes) -> int:
    return data.count(b"\n") + (not data.endswith(b"\n"))


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return 0.0
    k = min(len(s) - 1, max(0, round(q * (len(s) - 1))))
    return s[k]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = "load %.1f" % os.getloadavg()[0]
    except OSError:
        load = ""
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.machine()}" + (f", {load} at start" if load else "")


def corpus_versions(root: Path) -> str:
    try:
        manifest = json.loads((root / "MANIFEST.json").read_text())
        return ", ".join(manifest["packages"])
    except (OSError, ValueError, KeyError):
        return "unknown (no MANIFEST.json)"


def rule_set(label: str) -> Settings:
    """`default` (what a user meets: `Settings()`), `ALL`, or `default+TRI016+...`: the default
    set with the named rules added (a set a rule is about to join, measured before it does)."""
    if label == "default":
        return Settings()
    if label == "ALL":
        return Settings(select=("ALL",))
    head, *extra = label.split("+")
    if head != "default" or not extra:
        raise SystemExit(f"unknown rule set {label!r}: default, ALL or default+CODE")
    return Settings(select=tuple(r.code for r in all_rules() if r.rule.default) + tuple(extra))


def write_findings(out: Path, rows: list[tuple], corpus: Path) -> None:
    """One finding a line (code, path relative to the corpus, line, column, message), sorted:
    `diff` of two engines' files says whether a change moved any finding."""
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = sorted("\t".join(map(str, (code, Path(path).relative_to(corpus).as_posix(), line, col, msg)))
                   for code, path, line, col, msg in rows)
    out.write_text("".join(line + "\n" for line in lines))
    print(f"wrote {len(lines)} findings to {out}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=default_dest())
    ap.add_argument("--repeat", type=int, default=3, help="passes over the corpus (each file keeps its fastest)")
    ap.add_argument("--slowest", type=int, default=10, help="how many of the slowest files to break down by rule")
    ap.add_argument("--limit", type=int, default=0, help="only the first N files (a quick look)")
    ap.add_argument("--no-write", action="store_true", help="print only; do not write results/lint_speed_realworld.md")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "lint_speed_realworld.md")
    ap.add_argument("--json", type=Path, help="also write every file's fastest parse and lint ms here")
    ap.add_argument("--sets", default="default,default+TRI016,ALL",
                    help="comma-separated rule sets to measure: `default`, `ALL`, or `default+CODE[+CODE...]` "
                         "(the default set with opt-in rules added; left out when they are all in the default set)")
    ap.add_argument("--findings", type=Path,
                    help="write each set's findings of the first pass here (one `<set>.tsv` per set: code, path "
                         "relative to the corpus, line, column, message, sorted) to diff two engines' findings")
    args = ap.parse_args(argv)

    files = corpus_files(args.corpus)
    if args.limit:
        files = files[: args.limit]
    if not files:
        print(f"no corpus at {args.corpus}: build it with benchmarks/realworld/corpus.py", file=sys.stderr)
        return 2
    datas = read_all(files)
    paths = [str(p) for p in files]
    rel = [p.relative_to(args.corpus).as_posix() for p in files]
    n_lines = sum(d.count(b"\n") for d in datas)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    where = machine()
    big = big_file(args.corpus)
    defaults = {r.code for r in all_rules() if r.rule.default}
    # `default+TRI016` once TRI016 is in the default set is the default set again: measured once
    labels = [label for label in args.sets.split(",") if label
              and not (label.startswith("default+") and set(label.split("+")[1:]) <= defaults)]
    sets = [(label, rule_set(label)) for label in labels]
    runs = {}
    for label, settings in sets:
        fresh_index()
        FIRST_PASS.clear()
        lint_text(datas[0], paths[0], settings)  # imports and registry outside the timing
        fresh_index()
        print(f"{label} rules:", file=sys.stderr)
        rows: list[tuple] = []
        parse_best, lint_best, findings, unparsed = parse_and_lint_times(datas, paths, settings, args.repeat,
                                                                         progress=True, rows=rows)
        if args.findings:
            write_findings(args.findings / f"{label}.tsv", rows, args.corpus)
        runs[label] = dict(parse=parse_best, lint=lint_best, findings=findings, unparsed=unparsed,
                           first=sum(FIRST_PASS), read=default_index().modules_read if default_index else 0,
                           big=(best_and_median(lambda: ast.parse(big), 15)[1],
                                best_and_median(lambda: lint_text(big, "big.py", settings), 15)[1]))
    last, settings = sets[-1]   # the slowest files are broken down with the last set measured
    parse_best, lint_best = runs[last]["parse"], runs[last]["lint"]
    ms = [t * 1e3 for t in lint_best]
    order = sorted(range(len(files)), key=lambda i: -lint_best[i])

    slow = order[: args.slowest]
    stages = {i: stage_times(datas[i], paths[i], settings, 3) for i in slow}
    stage_names = sorted({s for st in stages.values() for s in st},
                         key=lambda s: -sum(st.get(s, 0.0) for st in stages.values()))
    shown = [s for s in stage_names if s in ("parse", "setup")][:2] + \
            [s for s in stage_names if s not in ("parse", "setup")][:8]

    out: list[str] = []
    n_default = sum(1 for r in all_rules() if r.rule.default)
    out.append(f"Lint speed on the real-world corpus, {started}, Python {platform.python_version()}, "
               f"{len(all_rules())} rules ({n_default} in the default set)")
    out.append("")
    out.append(f"Machine: {where}.")
    out.append(f"Corpus: {len(files)} files, {n_lines:,} lines ({corpus_versions(args.corpus)}).")
    out.append(f"Each file's fastest of {args.repeat} runs (parse and lint back to back), all in one process, "
               f"once per rule set ({', '.join(label for label, _ in sets)}; ALL is `--select ALL`), each with a fresh "
               "workspace index; "
               + (f"lint includes reading the modules files import ({runs[last]['read']} modules parsed "
                  "by the workspace index)." if default_index else "no workspace index in this engine."))
    out.append("")
    out.append("| measurement | rules | ast.parse only | tritonify lint | ratio | target |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    table: list[list[str]] = [[], [], [], [], [], []]
    for label, _ in sets:
        run = runs[label]
        p_best, l_best = run["parse"], run["lint"]
        p_total, l_total = sum(p_best), sum(l_best)
        p_ms, l_ms = [t * 1e3 for t in p_best], [t * 1e3 for t in l_best]
        worst = max(range(len(files)), key=lambda i: l_best[i])
        over = sum(1 for t in l_ms if t > FILE_TARGET_MS)
        big_parse, big_lint = run["big"]
        table[0].append(f"| corpus total, first pass (one `tritonify check` run: imported modules read once) | "
                       f"{label} | {p_total:.2f} s | {run['first']:.2f} s | {run['first'] / p_total:.2f}x | "
                       f"<= {RATIO_TARGET:g}x |")
        table[1].append(f"| corpus total: {len(files)} files, {n_lines:,} lines, {run['findings']:,} findings, "
                       f"{run['unparsed']} files not parsed (no kernel possible), fastest of {args.repeat} | {label} | "
                       f"{p_total:.2f} s | {l_total:.2f} s | {l_total / p_total:.2f}x | <= {RATIO_TARGET:g}x |")
        table[2].append(f"| per file p50 / p99 | {label} | {percentile(p_ms, .5):.1f} / {percentile(p_ms, .99):.1f} ms | "
                       f"{percentile(l_ms, .5):.1f} / {percentile(l_ms, .99):.1f} ms | | |")
        table[3].append(f"| slowest file ({rel[worst]}, {lines_of(datas[worst])} lines) | {label} | "
                       f"{p_ms[worst]:.1f} ms | {l_ms[worst]:.1f} ms | {l_best[worst] / p_best[worst]:.1f}x | "
                       f"<= {FILE_TARGET_MS:g} ms |")
        table[4].append(f"| files over {FILE_TARGET_MS:g} ms | {label} | | {over} | | 0 |")
        table[5].append(f"| one {big.count(chr(10)):,}-line kernel file, re-lint (median of 15) | {label} | "
                       f"{big_parse * 1e3:.1f} ms | {big_lint * 1e3:.1f} ms | {big_lint / big_parse:.2f}x | |")
    for pair in table:
        out.extend(pair)
    out.append("")
    out.append(f"The {len(slow)} slowest files with the {last} set, fastest of 3 runs per stage (ms; 'setup' is the module walk and "
               "kernel list the rules share; a rule that first asks for a shared fact pays for it):")
    out.append("")
    out.append("| file | lines | lint | " + " | ".join(shown) + " | rest |")
    out.append("| --- | --- | --- | " + " | ".join("---" for _ in shown) + " | --- |")
    for i in slow:
        st = stages[i]
        rest = sum(v for k, v in st.items() if k not in shown)
        out.append(f"| {rel[i]} | {lines_of(datas[i])} | {ms[i]:.1f} | "
                   + " | ".join(f"{st.get(s, 0.0) * 1e3:.1f}" for s in shown) + f" | {rest * 1e3:.1f} |")
    text = "\n".join(out) + "\n"
    print(text)
    if args.json:
        args.json.write_text(json.dumps({r: [p * 1e3, l * 1e3] for r, p, l in zip(rel, parse_best, lint_best)}, indent=0))
    if not args.no_write:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("# Lint speed on the real-world corpus\n\n"
                            "`python benchmarks/realworld/lint_speed.py` (targets: issue 13, item 6).\n\n"
                            "```\n" + text + "```\n")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
