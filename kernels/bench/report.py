"""Reports of a bench result: a pandas table, an HTML page, a PNG chart, terminal text.

The HTML page and the PNG (speedup of the kernel per shape against each baseline) are what the
editor extension shows; both state the method, the GPU and the versions, so a number never travels
without how it was measured.
"""
from __future__ import annotations

import html
import math
import re
from pathlib import Path

KERNEL = "kernel"

COLUMNS = ["shape", "impl", "status", "median_ms", "p20_ms", "p80_ms", "GB/s", "TFLOP/s", "%copy_bw", "%bf16_mm",
           "kernel_speedup", "host_us", "method", "noisy"]


def rows(result: dict) -> list[dict]:
    """One row per (shape, implementation)."""
    out = []
    for s in result.get("shapes", []):
        kernel = s["results"].get(KERNEL, {})
        k_ms = (kernel.get("timing") or {}).get("p50_ms")
        for impl, r in s["results"].items():
            t = r.get("timing") or {}
            speed = (t["p50_ms"] / k_ms) if (t and k_ms and impl != KERNEL) else None
            out.append({
                "shape": s["label"], "impl": impl, "status": r.get("status"),
                "median_ms": t.get("p50_ms"), "p20_ms": t.get("p20_ms"), "p80_ms": t.get("p80_ms"),
                "GB/s": r.get("gbps"), "TFLOP/s": r.get("tflops"),
                "%copy_bw": r.get("pct_copy_bw"), "%bf16_mm": r.get("pct_matmul"),
                "kernel_speedup": speed, "host_us": r.get("host_us"), "method": t.get("method"), "noisy": t.get("noisy"),
            })
    return out


def table(result: dict):
    """The result as a pandas DataFrame (``COLUMNS``)."""
    import pandas as pd

    return pd.DataFrame(rows(result), columns=COLUMNS)


def _fmt(value, digits=3):
    if value is None:
        return "-"
    if isinstance(value, float) and math.isnan(value):
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def header_lines(result: dict) -> list[str]:
    gpu = result.get("gpu") or {}
    ver = result.get("versions") or {}
    ceil = result.get("ceilings")
    contract = f"  (contract {result['contract']})" if result.get("contract") else ""
    lines = [f"target: {result.get('target')}{contract}"]
    if result.get("status") == "error" and not result.get("shapes"):
        return lines          # it ended before measuring: no GPU or versions to report
    if gpu.get("name"):
        lines.append(f"GPU: {gpu['name']} (driver {gpu.get('driver')}, SM {gpu.get('sm_clock_mhz')} MHz, "
                     f"mem {gpu.get('mem_clock_mhz')} MHz, {gpu.get('temperature_c')} C, {gpu.get('power_w')} W)")
        end = result.get("gpu_end") or {}
        if end.get("sm_clock_mhz") is not None:
            lines.append(f"GPU at the end: SM {end.get('sm_clock_mhz')} MHz, mem {end.get('mem_clock_mhz')} MHz, "
                         f"{end.get('temperature_c')} C, {end.get('power_w')} W")
    else:
        lines.append("GPU: none (correctness only, or host wall clock: NOT GPU measurements)")
    if any(ver.values()):
        lines.append("versions: " + ", ".join(f"{k} {v}" for k, v in ver.items() if v))
    if ceil:
        lines.append(f"ceilings: copy {ceil['copy_gbps']:.0f} GB/s, bf16 matmul {ceil['bf16_tflops']:.0f} TFLOP/s "
                     f"({'cached' if ceil.get('cached') else 'measured now'}, {ceil.get('measured_at')})")
    return lines


def text(result: dict) -> str:
    """Terminal report: header, table, method, summary (one sentence for a run that could not start here)."""
    if result.get("no_gpu"):
        return f"tritonify: {result.get('message')}"
    lines = header_lines(result)
    lines.append(f"status: {result.get('status')}" + (f" - {result['message']}" if result.get("message") else ""))
    if result.get("hint"):
        lines.append(f"hint: {result['hint']}")
    body = rows(result)
    if body:
        shown = ["shape", "impl", "status", "median_ms", "p20_ms", "p80_ms", "GB/s", "%copy_bw", "kernel_speedup",
                 "host_us", "method", "noisy"]
        cells = [[_fmt(r[c]) for c in shown] for r in body]
        widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(shown)]
        lines.append("  ".join(c.ljust(w) for c, w in zip(shown, widths)))
        lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
        for s in result.get("shapes", []):
            for impl, r in s["results"].items():
                if r.get("status") != "ok" or (r.get("timing") or {}).get("note"):
                    lines.append(f"  {s['label']} {impl}: {r.get('message') or ''} {(r.get('timing') or {}).get('note', '')}".rstrip())
    skipped = {k: v for k, v in (result.get("baselines") or {}).items() if v != "run"}
    for name, why in skipped.items():
        lines.append(f"baseline {name} skipped: {why}")
    if result.get("method"):
        lines.append("method:")
        lines += ["  " + m for m in result["method"].splitlines()]
    lines.append(f"summary: {result.get('summary', '')}")
    return "\n".join(lines)


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "bench"


def chart(result: dict, path: Path) -> Path | None:
    """PNG: the kernel's speedup per shape against each baseline (1.0 = as fast); None if nothing was timed."""
    speedups = [(s["label"], s.get("speedup", {})) for s in result.get("shapes", [])]
    names = sorted({n for _, sp in speedups for n in sp})
    if not names:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(speedups) + 2), 3.6), dpi=110)
    width = 0.8 / len(names)
    for j, name in enumerate(names):
        xs = [i + (j - (len(names) - 1) / 2) * width for i in range(len(speedups))]
        ys = [sp.get(name, 0.0) for _, sp in speedups]
        ax.bar(xs, ys, width=width, label=f"vs {name}")
        for x, y in zip(xs, ys):
            if y:
                ax.annotate(f"{y:.2f}x", (x, y), ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="black", linewidth=0.8)
    values = [v for _, sp in speedups for v in sp.values() if v]
    if values and max(values) / min(values) > 8:
        ax.set_yscale("log")      # one slow baseline (eager) would flatten the others

    ax.set_xticks(range(len(speedups)), [label for label, _ in speedups])
    ax.set_ylabel("kernel speedup (baseline time / kernel time)")
    gpu = (result.get("gpu") or {}).get("name") or "no GPU (not a GPU measurement)"
    ax.set_title(f"{result.get('contract') or result.get('target')} on {gpu}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def html_page(result: dict, png: Path | None) -> str:
    df = table(result)
    parts = ["<!doctype html><meta charset='utf-8'><title>tritonify bench</title>",
             "<style>body{font-family:sans-serif;font-size:13px}table{border-collapse:collapse}"
             "td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}pre{white-space:pre-wrap}</style>",
             f"<h2>{html.escape(str(result.get('contract') or result.get('target')))}</h2>",
             f"<p><b>{html.escape(result.get('summary', ''))}</b></p>",
             "<p>" + "<br>".join(html.escape(l) for l in header_lines(result)) + "</p>",
             f"<p>status: {html.escape(str(result.get('status')))} {html.escape(result.get('message') or '')}</p>",
             df.to_html(index=False, na_rep="-", float_format=lambda v: f"{v:.4g}")]
    if png is not None:
        parts.append(f"<p><img src='{html.escape(png.name)}' alt='speedup chart'></p>")
    parts.append("<h3>Method</h3><pre>" + html.escape(result.get("method", "")) + "</pre>")
    return "\n".join(parts)


def write(result: dict, folder: Path, name: str | None = None) -> dict:
    """Write ``<name>.html`` and ``<name>.png`` into ``folder``; returns their paths (png None if no chart)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stem = safe_name(name or str(result.get("contract") or result.get("target") or "bench"))
    png = chart(result, folder / f"{stem}.png")
    page = folder / f"{stem}.html"
    page.write_text(html_page(result, png), encoding="utf-8")
    return {"html": str(page.resolve()), "png": str(png.resolve()) if png else None}
