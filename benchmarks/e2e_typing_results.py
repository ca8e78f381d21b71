"""The real editor's typing latency as a results page: reads what tests/e2e/typing_latency.js wrote
(`.e2e/run/trusted/typing-latency.json`) and, when the run was traced (TRITONIFY_LATENCY_TRACE set
for scripts/e2e_typing.sh), the server's trace, and writes the Markdown (a benchmark's output, not a
test).

Run: `python benchmarks/e2e_typing_results.py REPORT.json [--trace TRACE.jsonl] [--out results/typing_latency_vscode.md]`.
With the trace, each latency is split where the time went, on one clock (CLOCK_MONOTONIC: the
driver's process.hrtime and the server's time.monotonic): the last key to the server reading its
didChange (VS Code, the extension host, the pipe), that didChange to the server's
publishDiagnostics of that version (the lint), and the publish to the Problems row (VS Code).
"""
from __future__ import annotations

import argparse
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--trace")
    ap.add_argument("--out")
    ap.add_argument("--versions", default="", help="what ran, for the page (code-server, tritonify commit)")
    args = ap.parse_args(argv)
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
    parts = split(report, [json.loads(x) for x in Path(args.trace).read_text().splitlines()]) if args.trace else []
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
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
