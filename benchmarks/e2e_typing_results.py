"""The real editor's typing latency as a results page: reads what tests/e2e/typing_latency.js wrote
(`.e2e/run/trusted/typing-latency.json`) and, when the run was traced (TRITONIFY_LATENCY_TRACE set
for scripts/e2e_typing.sh), the server's trace, and writes the Markdown (a benchmark's output, not a
test).

Run: `python benchmarks/e2e_typing_results.py REPORT.json [--trace TRACE.jsonl] [--out results/typing_latency_vscode.md]`;
`--compare before=A.json:A.jsonl after=B.json:B.jsonl ...` prints an A/B table of runs instead.
With the trace, each latency is split where the time went, on one clock (CLOCK_MONOTONIC: the
driver's process.hrtime and the server's time.monotonic): the last key to the server reading its
didChange (VS Code, the extension host, the pipe), that didChange to the server's
publishDiagnostics of that version (the lint), and the publish to the Problems row (VS Code).
"""
from __future__ import annotations

import argparse
import gzip
import json
import platform
import statistics
import sys
from pathlib import Path


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, -(-len(ordered) * p // 100) - 1))]


def split(report: dict, trace: list[dict]) -> list[tuple[float, float, float] | None]:
    """(key -> didChange read, didChange -> publish, publish -> row) in ms for each statement."""
    changes = [e for e in trace if e["ev"] == "s.change"]
    publishes = [e for e in trace if e["ev"] in ("s.publish", "s.publish.first", "s.publish.exact")]
    out: list[tuple[float, float, float] | None] = []
    for key_s, latency_ms in zip(report.get("last_key_monotonic_s", []), report["latencies_ms"]):
        # the first didChange read after the driver took the time and pressed the last key
        change = next((e for e in changes if e["t"] >= key_s), None)
        if change is None:
            out.append(None)
            continue
        publish = next((e for e in publishes if e["version"] == change["version"] and e["t"] >= change["t"]), None)
        if publish is None:
            out.append(None)
            continue
        to_change = (change["t"] - key_s) * 1000
        to_publish = (publish["t"] - change["t"]) * 1000
        out.append((to_change, to_publish, latency_ms - to_change - to_publish))
    return out


STAGES = (
    ("key -> page keydown", "the driver's key through CDP to the page (Chromium's input)"),
    ("keydown -> ext host", "the workbench's edit to the extension host's onDidChangeTextDocument (c.change)"),
    ("ext host -> server", "vscode-languageclient's send, the pipe, the server's read and dispatch (s.change)"),
    ("server", "didChange to the publishDiagnostics that showed the row (s.publish*)"),
    ("server -> ext host", "the pipe and vscode-languageclient's read (c.diag)"),
    ("ext host -> row", "DiagnosticCollection.set to the row in the Problems panel (the page's sampler)"),
)


def stages(report: dict, trace: list[dict]) -> list[list[float] | None]:
    """Each latency cut at every timestamp the driver, the page, the extension host (c.* events,
    extension/latencyTrace.ts) and the server recorded, in ms (STAGES), or None where one is
    missing (a run without the page's or the client's events)."""
    keys = report.get("page_keydown_monotonic_s") or []
    rows = report.get("row_seen_monotonic_s") or []
    client_changes = [e for e in trace if e["ev"] == "c.change"]
    client_diags = [e for e in trace if e["ev"] == "c.diag"]
    if not keys or not client_changes:
        return []
    changes = [e for e in trace if e["ev"] == "s.change"]
    publishes = [e for e in trace if e["ev"] in ("s.publish", "s.publish.first", "s.publish.exact")]
    out: list[list[float] | None] = []
    for key_s, page_s, row_s in zip(report["last_key_monotonic_s"], keys, rows):
        if page_s is None:
            out.append(None)
            continue
        client = next((e for e in client_changes if e["t"] >= page_s), None)
        change = client and next((e for e in changes if e["version"] == client["version"] and e["t"] >= client["t"]), None)
        publish = change and next((e for e in publishes if e["version"] == change["version"] and e["t"] >= change["t"]), None)
        diag = publish and next((e for e in client_diags if e["t"] >= publish["t"]), None)
        if diag is None:
            out.append(None)
            continue
        marks = [key_s, page_s, client["t"], change["t"], publish["t"], diag["t"], row_s]
        out.append([(b - a) * 1000 for a, b in zip(marks, marks[1:])])
    return out


def squiggle_split(report: dict, trace: list[dict]) -> list[tuple[float, float]]:
    """The last stage (ext host -> row) cut where the editor drew the new warning squiggle (the
    workbench had the markers): (ext host -> squiggle, squiggle -> Problems row) in ms, for the
    statements with every timestamp. What follows the squiggle is the Problems panel's own: its
    64 ms debounce of marker changes and its redraw."""
    squiggles = report.get("squiggle_seen_monotonic_s") or []
    out = []
    for parts, squiggle_s, row_s, key_s in zip(stages(report, trace), squiggles, report.get("row_seen_monotonic_s") or [],
                                              report["last_key_monotonic_s"]):
        if parts is None or squiggle_s is None or squiggle_s > row_s:
            continue
        diag_s = key_s + sum(parts[:5]) / 1000
        out.append(((squiggle_s - diag_s) * 1000, (row_s - squiggle_s) * 1000))
    return out


def publications(report: dict, trace: list[dict]) -> list[int]:
    """How many publishDiagnostics the extension host received while each statement was typed
    (from its first key, 16 keys and PAUSE_MS before the last, to the last key)."""
    diags = [e["t"] for e in trace if e["ev"] == "c.diag"]
    if not diags:
        return []
    span = (16 + 9) * report["key_ms"] / 1000 + report["pause_ms"] / 1000
    return [sum(1 for t in diags if key_s - span <= t < key_s) for key_s in report["last_key_monotonic_s"]]


def sets_reaching_vscode(report: dict, trace: list[dict]) -> list[int]:
    """How many publications the client handed to VS Code (c.diag.set) while each statement was
    typed, before its last key (publications() counts those it received)."""
    sets = [e["t"] for e in trace if e["ev"] == "c.diag.set"]
    span = (16 + 9) * report["key_ms"] / 1000 + report["pause_ms"] / 1000
    return [sum(1 for t in sets if key_s - span <= t < key_s) for key_s in report["last_key_monotonic_s"]]


def compare(runs: list[tuple[str, str, str]]) -> str:
    """An A/B table of runs `(label, report.json, trace.jsonl)`, in the order they ran: end to
    end, the load, each stage's median (STAGES), and the publications that reached VS Code."""
    head = ["| run | build | load median | p50 ms | p95 ms | max ms |"
            + "".join(f" {name} |" for name, _ in STAGES) + " publications received / handed to VS Code per statement |",
            "| --- | --- | --- | --- | --- | --- |" + " --- |" * (len(STAGES) + 1)]
    rows = []
    for label, report_path, trace_path in runs:
        report = json.loads(Path(report_path).read_text())
        trace = read_trace(trace_path)
        lat = report["latencies_ms"]
        known = [p for p in stages(report, trace) if p]
        medians = [statistics.median(p[k] for p in known) if known else float("nan") for k in range(len(STAGES))]
        received, handed = publications(report, trace), sets_reaching_vscode(report, trace)
        cut = squiggle_split(report, trace)
        squiggle = (f" (squiggle at {statistics.median(c[0] for c in cut):.0f}, row {statistics.median(c[1] for c in cut):.0f} after it)"
                    if cut else "")
        rows.append(f"| {report['date'][:16]}Z | {label} | {statistics.median(report['load_1min_each_second']):.2f} | "
                    f"{_percentile(lat, 50):.0f} | {_percentile(lat, 95):.0f} | {max(lat):.0f} |"
                    + "".join(f" {m:.0f} |" for m in medians[:-1]) + f" {medians[-1]:.0f}{squiggle} |"
                    + f" {statistics.median(received) if received else 0:.0f} / {statistics.median(handed) if handed else 0:.0f} |")
    return "\n".join(head + rows) + "\n"


def read_trace(path: str) -> list[dict]:
    """A trace file (JSON lines; gzipped when its name ends in .gz, as committed under results/)."""
    data = gzip.decompress(Path(path).read_bytes()) if path.endswith(".gz") else Path(path).read_bytes()
    return [json.loads(x) for x in data.decode("utf-8").splitlines() if x.strip()]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", nargs="?")
    ap.add_argument("--trace")
    ap.add_argument("--out")
    ap.add_argument("--versions", default="", help="what ran, for the page (code-server, tritonify commit)")
    ap.add_argument("--compare", nargs="+", metavar="LABEL=REPORT.json:TRACE.jsonl",
                    help="print an A/B table of these runs (in the order they ran) instead of one run's page")
    args = ap.parse_args(argv)
    if args.compare:
        runs = []
        for item in args.compare:
            label, _, paths = item.partition("=")
            report_path, _, trace_path = paths.partition(":")
            runs.append((label, report_path, trace_path))
        print(compare(runs), end="")
        return 0
    if not args.report:
        ap.error("a report, or --compare")
    report = json.loads(Path(args.report).read_text())
    lat = report["latencies_ms"]
    loads = report["load_1min_each_second"]
    lines = [
        "# Typing into fla's parallax kernels in a real VS Code (tests/e2e/typing_latency.js)",
        "",
        f"{report['date']}; {platform.machine()}, {report['cpus']} CPUs shared with other jobs; load average (1 min) "
        f"{min(loads):.2f}-{max(loads):.2f} while typing, median {statistics.median(loads):.2f}"
        f"{' (with yes > /dev/null beside it to reach 2)' if report.get('yes_pair') else ''}; {args.versions}",
        f"`bash scripts/e2e_typing.sh`: the built .vsix in code-server (headless Chromium), `{report['file']}` "
        f"(813 lines), {report['statements']} statements `tl.device_print(\"typed i\", i_t)` typed key by key "
        f"({report['key_ms']} ms apart, a {report['pause_ms']} ms pause after the `(`) into the largest kernel; "
        "latency = the last key to the new TRI022 row in the Problems panel, sampled in the page every 10 ms.",
        "",
        f"**Problems row after the last key: p50 {_percentile(lat, 50):.0f} ms, p95 {_percentile(lat, 95):.0f} ms, "
        f"max {max(lat):.0f} ms** over {len(lat)} statements; "
        f"{len(report['drops'])} samples (10 ms apart) while typing in which a finding or a code lens had disappeared.",
        "",
        "| statement | last key -> Problems row ms |" + (" key -> didChange read | didChange -> publish | publish -> row |" if args.trace else ""),
        "| --- | --- |" + (" --- | --- | --- |" if args.trace else ""),
    ]
    trace = read_trace(args.trace) if args.trace else []
    parts = split(report, trace) if args.trace else []
    for i, ms in enumerate(lat):
        row = f"| {i} | {ms:.0f} |"
        if args.trace:
            p = parts[i] if i < len(parts) else None
            row += " | | |" if p is None else f" {p[0]:.0f} | {p[1]:.0f} | {p[2]:.0f} |"
        lines.append(row)
    if args.trace and any(parts):
        known = [p for p in parts if p]
        lines += ["", "Medians: key -> didChange read {:.0f} ms, didChange -> publish {:.0f} ms, publish -> row {:.0f} ms.".format(
            *(statistics.median(p[k] for p in known) for k in range(3)))]
    fine = stages(report, trace)
    known = [p for p in fine if p]
    if known:
        lines += ["", "Where each millisecond goes (medians over the statements with every timestamp, "
                  f"{len(known)} of {len(fine)}; one clock, CLOCK_MONOTONIC):", "",
                  "| stage | median ms | p95 ms | what it is |", "| --- | --- | --- | --- |"]
        for k, (name, what) in enumerate(STAGES):
            column = [p[k] for p in known]
            lines.append(f"| {name} | {statistics.median(column):.0f} | {_percentile(column, 95):.0f} | {what} |")
    cut = squiggle_split(report, trace)
    if cut:
        lines += ["", f"The last stage, cut where the editor drew the new squiggle ({len(cut)} statements): ext host -> squiggle "
                  f"median {statistics.median(c[0] for c in cut):.0f} ms (p95 {_percentile([c[0] for c in cut], 95):.0f}), "
                  f"squiggle -> Problems row median {statistics.median(c[1] for c in cut):.0f} ms "
                  f"(p95 {_percentile([c[1] for c in cut], 95):.0f}; the Problems panel's 64 ms debounce and redraw)."]
    counts = publications(report, trace)
    if counts:
        lines += ["", f"publishDiagnostics received by the extension host while a statement was typed (before its last key): "
                  f"median {statistics.median(counts):.0f}, max {max(counts)} per statement."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
