"""Diagnostics latency while typing into real-world kernel files (a benchmark, not a test).

Run: `python benchmarks/server_latency_realworld.py [--files N] [--rounds 3] [--out results/server_latency_realworld.md]`.
It starts `python -m tritonify.server` as an editor does (stdio, a plain JSON-RPC client, no
pygls), opens each file, and types one statement into the end of its largest kernel one key at a
time (a didChange with the whole text every 70 ms), and the same into its largest launcher and on a
new last line (`--where`: edits outside the kernels). What is measured: from the last key's
didChange to the publishDiagnostics for that version. The files: flash-linear-attention's
815-line parallax kernels and the files of the real-world corpus (~/.cache/tritonify-realworld)
with the most `@triton.jit` lines, then a seeded sample of the others holding a kernel.
Prints p50/p95/max over all keystrokes measured and per file, and writes the Markdown table to
`--out` with the date, the machine and the versions.

`--largest N --random M` samples more widely: the N largest corpus files holding a kernel (by
size) plus M others holding one, drawn with `--seed`. `--trace` records where the time of each
measurement went (server/latency_trace.py: the lint workers' parse, index, kernel search and
lint, which kernels were linted again or why the file was linted in full, collector passes, the
publish) and explains the slowest measurements in the results.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_latency import Client  # noqa: E402 - the plain stdio client

CORPUS = Path.home() / ".cache" / "tritonify-realworld"
PARALLAX = CORPUS / "fla-core" / "fla" / "ops" / "parallax" / "parallel.py"
KEY_GAP_S = 0.07
TYPED = "tmp_edit = 1"


def kernel_files(count: int, seed: int) -> list[Path]:
    found = []
    for path in CORPUS.rglob("*.py"):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        jits = text.count("@triton.jit") + text.count("@jit")
        if jits:
            found.append((jits, len(text), path))
    found.sort(reverse=True)
    top = [p for _, _, p in found[: count // 2]]
    rest = [p for _, _, p in found[count // 2:]]
    random.Random(seed).shuffle(rest)
    files = [PARALLAX] + [p for p in top + rest[: count - len(top)] if p != PARALLAX]
    return files[:count]


def wide_sample(largest: int, others: int, seed: int) -> list[Path]:
    """The `largest` largest corpus files in which Tritonify finds a kernel, then `others` more
    such files drawn at random (seeded) from the rest; the parallax file first."""
    found = []
    for path in sorted(CORPUS.rglob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if "@triton.jit" in text or "@jit" in text:
            found.append((len(text), path))
    found.sort(key=lambda f: (-f[0], str(f[1])))

    def has_kernel(path: Path) -> bool:
        try:
            return typing_point(path.read_text(encoding="utf-8"), "kernel") is not None
        except (SyntaxError, ValueError, RecursionError):
            return False

    top, rest = [], []
    for _, path in found:
        if len(top) < largest:
            if has_kernel(path):
                top.append(path)
        else:
            rest.append(path)
    random.Random(seed).shuffle(rest)
    drawn = []
    for path in rest:
        if len(drawn) >= others:
            break
        if has_kernel(path):
            drawn.append(path)
    picked = top + drawn
    return [PARALLAX] + [p for p in picked if p != PARALLAX]


WHERE = {
    "kernel": "at the end of each file's largest kernel",
    "launcher": "at the end of each file's largest function outside the kernels (a launcher; the file's end when it has none)",
    "end": "on a new last line, outside every kernel",
    "enter": "as a single Enter at the end of each file's largest kernel (a line added: the file is parsed in full)",
}


def typing_point(text: str, where: str = "kernel") -> tuple[int, str] | None:
    """Where the statement is typed: (0-based line, indent). "kernel": the end of the file's
    largest top-level Triton kernel (as Tritonify finds kernels); "launcher": the end of the
    largest top-level function that is not a kernel; "end": a new last line."""
    from tritonify.diagnostics.incremental import layout_of
    from tritonify.diagnostics.source import SourceFile

    where = "kernel" if where == "enter" else where
    layout = layout_of(SourceFile.from_text(text, "x.py"))
    if layout is None or not layout.segments:
        return None
    tree = ast.parse(text)
    lines = text.splitlines()
    if where == "launcher":
        firsts = {s.first for s in layout.statements}
        functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)
                     and min([n.lineno, *(d.lineno for d in n.decorator_list)]) in firsts]
        if functions:
            node = max(functions, key=lambda n: (n.end_lineno or n.lineno) - n.lineno)
            body_line = lines[node.body[-1].lineno - 1]
            return node.end_lineno, body_line[: len(body_line) - len(body_line.lstrip())]
        where = "end"
    if where == "end":
        return len(lines), ""
    seg = max(layout.segments, key=lambda s: s.last - s.first)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == seg.name and
                (n.end_lineno or n.lineno) == seg.last)
    body_line = lines[node.body[0].lineno - 1]
    return seg.last, body_line[: len(body_line) - len(body_line.lstrip())]


def stats(ms: list[float]) -> tuple[float, float, float]:
    ms = sorted(ms)
    return statistics.median(ms), ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))], ms[-1]


def versions_line() -> str:
    from tritonify import __version__

    try:
        import pygls

        pygls_version = getattr(pygls, "__version__", None) or __import__("importlib.metadata").metadata.version("pygls")
    except Exception:
        pygls_version = "?"
    return f"tritonify {__version__}, Python {sys.version.split()[0]}, pygls {pygls_version}"


def measure(c: Client, paths: list[Path], rounds: int, where: str, requests: bool = True,
            samples_out: list | None = None) -> tuple[list[str], list[float]]:
    """Type into each file `rounds` times at the point `where` names; (table rows, every latency).
    `requests`: with each key, ask for the code actions at the cursor and cancel the last such
    request, as VS Code does (each asks about a version the next key makes stale). `samples_out`
    gets (file, where, version, sent, published) per measurement (monotonic clock)."""
    rows, every = [], []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        try:
            point = typing_point(text, where)
        except (SyntaxError, ValueError, RecursionError):
            point = None
        if point is None:
            continue
        line, indent = point
        uri = path.as_uri()
        c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
        opened = time.perf_counter()
        c.wait_published(uri, 1, timeout=300)
        open_ms = (time.perf_counter() - opened) * 1000
        lines = text.splitlines(keepends=True)
        version, samples, asked = 1, [], None
        for r in range(rounds):
            typed = ""
            for key in (f"{TYPED}{r}" if where != "enter" else "\n"):
                typed += key if where != "enter" else ""
                version += 1
                edited = "".join(lines[:line] + [f"{indent}{typed}\n"] + lines[line:])
                sent = time.perf_counter()
                c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                    "contentChanges": [{"text": edited}]})
                if requests:   # as VS Code does: code actions at the cursor, the last one cancelled
                    if asked is not None:
                        c.notify("$/cancelRequest", {"id": asked})
                    at = {"line": line, "character": len(indent) + len(typed)}
                    asked = c.request_async("textDocument/codeAction", {
                        "textDocument": {"uri": uri}, "range": {"start": at, "end": at},
                        "context": {"diagnostics": [], "triggerKind": 2}})
                time.sleep(KEY_GAP_S)
            published = c.wait_published(uri, version, timeout=300)
            samples.append((published - sent) * 1000)
            if samples_out is not None:
                samples_out.append((path, where, version, sent, published))
            time.sleep(2.0)   # typing pauses: the full lint confirming it runs now
            lines = edited.splitlines(keepends=True)
            line += 1
        c.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        time.sleep(0.5)
        with c.cond:   # the next place reopens the file from version 1
            c.published = [p for p in c.published if p[1]["uri"] != uri]
        rel = path.relative_to(CORPUS) if path.is_relative_to(CORPUS) else path
        p50, p95, worst = stats(samples)
        rows.append(f"| {rel} | {len(text.splitlines())} | {open_ms:.0f} | {p50:.0f} | {worst:.0f} |")
        every += samples
        print(f"[{where}] {rows[-1]}", flush=True)
    return rows, every


def _rel(path: Path):
    return path.relative_to(CORPUS) if path.is_relative_to(CORPUS) else path


def _events(trace_file: Path) -> list[dict]:
    out = []
    with open(trace_file, encoding="utf-8") as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    out.sort(key=lambda e: e["t"])
    return out


def breakdown(events: list[dict], version: int, sent: float, published: float) -> str:
    """Where the time from the last key (`sent`) to the publish of `version` went, in one line."""
    window = [e for e in events if sent - 0.001 <= e["t"] <= published + 0.005]
    ms = lambda t: (t - sent) * 1000   # noqa: E731
    parts = []
    start = next((e for e in window if e["ev"] == "s.lint" and e.get("version") == version), None)
    if start is None:
        return "no lint of that version started after its key (published from a lint under way)"
    parts.append(f"its lint started at +{ms(start['t']):.0f}")
    before = [e for e in window if e["t"] < start["t"] and e["ev"] in ("w.request", "w.answered", "w.linted", "s.lint.stopped")]
    if before:
        parts.append("before it: " + ", ".join(f"{e['ev']}{'(' + e.get('status', e.get('why', '')) + ')' if e['ev'] in ('w.answered', 's.lint.stopped') else ''} +{ms(e['t']):.0f}"
                                                for e in before))
    request = next((e for e in window if e["ev"] == "w.request" and e["t"] >= start["t"] and e.get("mode") == "incremental"), None)
    if request is not None:
        mine = [e for e in window if e["pid"] == request["pid"] and e["t"] >= request["t"]]
        marks = {}
        for e in mine:
            marks.setdefault(e["ev"], e)
        prev = request
        for name, label in (("w.parsed", "parse"), ("w.indexed", "index"), ("w.kernels", "kernels"),
                            ("w.linted", "lint"), ("w.answered", "answer")):
            e = marks.get(name)
            if e is None:
                continue
            parts.append(f"{label} {(e['t'] - prev['t']) * 1000:.0f}")
            prev = e
        linted = marks.get("w.linted")
        if linted is not None:
            what = (f"re-linted {', '.join(linted['relinted']) or 'no kernel'} and {linted['statements']} statements"
                    if not linted["full_because"] else f"FULL lint: {linted['full_because']}")
            parts.append(f"({what}; {linted['findings']} findings)")
        parts.append(f"wait for the worker {(request['t'] - start['t']) * 1000:.0f}")
    publish = next((e for e in window if e["ev"] == "s.publish" and e.get("version") == version), None)
    if publish is not None:
        done = next((e for e in window if e["ev"] == "s.published" and e.get("version") == version), publish)
        parts.append(f"publish started +{ms(publish['t']):.0f}, took {(done['t'] - publish['t']) * 1000:.0f}")
    gcs = [e for e in window if e["ev"] == "gc"]
    if gcs:
        parts.append("GC " + ", ".join(f"gen{e['generation']} {e['ms']:.0f} ms (pid {e['pid']})" for e in gcs))
    return "; ".join(parts)


def explain_slowest(trace_file: Path, measured: list, count: int) -> str:
    events = _events(trace_file)
    worst = sorted(measured, key=lambda m: m[3] - m[4])[:count]
    lines = [f"## Where the time of the {len(worst)} slowest measurements went (`--trace`)\n",
             "Milliseconds after the last key's didChange was sent; parse / index / kernels / lint / answer are the "
             "lint worker's phases for that version.\n"]
    for path, where, version, sent, published in worst:
        lines.append(f"- {(published - sent) * 1000:.0f} ms, {_rel(path)} `{where}` v{version}: "
                     f"{breakdown(events, version, sent, published)}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--file", action="append", help="measure this file (repeatable) instead of the corpus sample")
    ap.add_argument("--where", default="kernel,launcher,end",
                    help="where to type, a comma-separated list of: " + ", ".join(f"{k} ({v})" for k, v in WHERE.items()))
    ap.add_argument("--no-requests", action="store_true",
                    help="send only didChange (by default each key also asks for code actions at the cursor, as VS Code does)")
    ap.add_argument("--server-command", help="the server to measure (default: this Python's tritonify.server), "
                                            "e.g. an older checkout's, for a before/after comparison")
    ap.add_argument("--largest", type=int, help="sample the N largest corpus files holding a kernel (with --random)")
    ap.add_argument("--random", type=int, default=0, help="and M more of those files drawn with --seed")
    ap.add_argument("--trace", action="store_true", help="record where the time goes and explain the slowest measurements")
    ap.add_argument("--explain", type=int, default=8, help="with --trace: how many of the slowest measurements to explain")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "results" / "server_latency_realworld.md"))
    args = ap.parse_args(argv)
    wheres = [w.strip() for w in args.where.split(",") if w.strip()]
    unknown = [w for w in wheres if w not in WHERE]
    if unknown:
        ap.error(f"unknown --where {', '.join(unknown)} (choose from {', '.join(WHERE)})")

    trace_file = None
    if args.trace:
        from tritonify.server.latency_trace import ENV

        trace_file = Path(os.environ.get("TMPDIR", "/tmp")) / f"tritonify-latency-trace-{os.getpid()}.jsonl"
        trace_file.unlink(missing_ok=True)
        os.environ[ENV] = str(trace_file)   # the server and its lint workers inherit it
    load_at_start = os.getloadavg()[0]
    c = Client(args.server_command.split() if args.server_command else None)
    c.request("initialize", {"processId": os.getpid(), "rootUri": CORPUS.as_uri(), "capabilities": {
        "window": {"workDoneProgress": True}}, "initializationOptions": {"lint": {"timeoutSeconds": 600}}})
    c.notify("initialized", {})
    if args.file:
        paths = [Path(f).resolve() for f in args.file]
    elif args.largest is not None:
        paths = wide_sample(args.largest, args.random, args.seed)
    else:
        paths = kernel_files(args.files, args.seed)
    sections, everything, measured = [], [], []
    for where in wheres:
        rows, every = measure(c, paths, args.rounds, where, not args.no_requests, measured)
        everything += every
        p50, p95, worst = stats(every)
        sections.append(f"## Typing {WHERE[where]} (`{where}`)\n\n"
                        f"**All {len(every)} measurements: p50 {p50:.0f} ms, p95 {p95:.0f} ms, max {worst:.0f} ms.**\n\n"
                        "| file | lines | open -> first diagnostics ms | typing p50 ms | typing max ms |\n"
                        "| --- | --- | --- | --- | --- |\n" + "\n".join(rows) + "\n")
    c.request("shutdown", None)
    c.notify("exit", None)
    c.proc.wait(30)

    p50, p95, worst = stats(everything)
    if args.file:
        chosen = " ".join(f"--file {f}" for f in args.file)
    elif args.largest is not None:
        chosen = f"--largest {args.largest} --random {args.random} --seed {args.seed}"
    else:
        chosen = f"--files {args.files}"
    slowest = max(measured, key=lambda m: m[4] - m[3]) if measured else None
    head = (f"# Diagnostics latency while typing into real-world files\n\n"
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.machine()}, {os.cpu_count()} CPUs, "
            f"load average {load_at_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; {versions_line()}.\n"
            f"`python benchmarks/server_latency_realworld.py {chosen} --rounds {args.rounds} --where {','.join(wheres)}"
            f"{' --trace' if args.trace else ''}` ({len(paths)} files): "
            f"one statement typed key by key ({KEY_GAP_S * 1000:.0f} ms apart), {args.rounds} times per file and place"
            f"{'' if args.no_requests else ', each key also asking for the code actions at the cursor (the previous request cancelled), as VS Code does'}; "
            f"latency = last key's didChange -> publishDiagnostics of that version.\n\n"
            f"**All {len(everything)} measurements: p50 {p50:.0f} ms, p95 {p95:.0f} ms, max {worst:.0f} ms**"
            + (f" (the slowest: {_rel(slowest[0])}, `{slowest[1]}`).\n\n" if slowest else ".\n\n"))
    report = head + "\n".join(sections)
    if trace_file is not None:
        report += "\n" + explain_slowest(trace_file, measured, args.explain)
    print(report)
    Path(args.out).write_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
