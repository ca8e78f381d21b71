"""Turn device runs' files (templates_h200.jsonl, device_info.txt, gpu_checks.log) into
``results/templates_h200.md``: per template, the harness's rows and the issue's targets (memory-bound:
>= 85% of copy bandwidth and >= 1.0x Liger and torch.compile; linear + GELU: >= 1.0x torch.compile).

    python gpu/templates/write_results.py FILES_DIR [EARLIER_DIR ...] results/templates_h200.md

`results/templates_h200/NOTES.md` (the reading of the misses, written by hand) goes after the table.

The first folder is the latest run (its checks and device are reported); a template it did not
measure (its time budget ran out) is taken from the next folder that did, and marked with that
run's date: each template's numbers always come from one run of its own.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

COPY_TARGET = 85.0


def _fmt(value, spec: str, empty: str = "-") -> str:
    return empty if value is None else format(value, spec)


def _verdict(name: str, shape: dict) -> str:
    kernel = shape["results"].get("kernel", {})
    speed = shape.get("speedup", {})
    if not kernel.get("timing"):
        return f"not timed ({kernel.get('message') or kernel.get('timing_skipped') or 'no timing'})"
    parts = []
    if shape.get("bound") == "memory" and name != "linear_gelu":
        pct = kernel.get("pct_copy_bw")
        parts.append(f"{pct:.1f}% of copy BW ({'meets' if pct >= COPY_TARGET else 'misses'} 85%)")
    for base in ("compile", "liger"):
        if base in speed:
            x = speed[base]
            shown = f"{x:.2f}x" if x >= 1.0 or x < 0.99 else f"{x:.3f}x"   # 0.998 must not read as 1.00
            parts.append(f"{shown} {base} ({'meets' if x >= 1.0 else f'misses 1.0x by {100 * (1 - x):.1f}%'})")
        else:
            parts.append(f"no {base} ratio")
    return "; ".join(parts)


def _records(files: Path) -> list[dict]:
    return [json.loads(line) for line in (files / "templates_h200.jsonl").read_text().splitlines() if line.strip()]


def merged_records(folders: list[Path]) -> list[dict]:
    """One record per template: from the latest run that measured it (the first folder first)."""
    runs = [_records(f) for f in folders]
    names: list[str] = []
    for records in reversed(runs):          # the oldest run holds the whole list, in priority order
        names += [r.get("template") for r in records if r.get("template") not in names]
    out = []
    for name in names:
        found = None
        for i, records in enumerate(runs):
            found = next((r for r in records if r.get("template") == name and r.get("shapes")), None)
            if found:
                if i:
                    found = dict(found, earlier_run=(found.get("ceilings") or {}).get("measured_at", folders[i].name))
                break
        out.append(found or next(r for records in runs for r in records if r.get("template") == name))
    return out


NOTES = Path(__file__).resolve().parents[2] / "results" / "templates_h200" / "NOTES.md"


def render(files: Path, earlier: list[Path] | None = None) -> str:
    records = merged_records([files, *(earlier or [])])
    info = (files / "device_info.txt").read_text().strip() if (files / "device_info.txt").exists() else ""
    checks = (files / "gpu_checks.log").read_text() if (files / "gpu_checks.log").exists() else ""
    first = next((r for r in records if r.get("gpu")), {})
    gpu, ver, ceil = first.get("gpu", {}), first.get("versions", {}), first.get("ceilings") or {}
    out = ["# Kernel templates on NVIDIA H200: `tritonify bench` against eager, torch.compile and Liger-Kernel", ""]
    out.append(f"Measured {ceil.get('measured_at', '?')} on one {gpu.get('name', '?')} (driver {gpu.get('driver', '?')}, "
               f"{gpu.get('sms', '?')} SMs), python {ver.get('python', '?')}, torch {ver.get('torch', '?')} "
               f"(CUDA {ver.get('cuda', '?')}), triton {ver.get('triton', '?')}, liger-kernel {ver.get('liger-kernel', '?')}. "
               "Each template is one harness job (its own process), in priority order (`gpu/templates/h200_bench.py`); "
               "a template marked *earlier run* comes from the run named there, its kernel unchanged since.")
    out.append("")
    out.append(f"Ceilings measured in this run: copy bandwidth **{_fmt(ceil.get('copy_gbps'), '.0f')} GB/s**, "
               f"bf16 matmul **{_fmt(ceil.get('bf16_tflops'), '.0f')} TFLOP/s**.")
    out.append("")
    out.append("| template | shape | verdict against the issue's targets |")
    out.append("| --- | --- | --- |")
    for r in records:
        name = r.get("template")
        if r.get("status") in ("not_run", "error") or not r.get("shapes"):
            out.append(f"| {name} | - | {r.get('status')}: {r.get('message', '')} |")
            continue
        for s in r["shapes"]:
            mark = f" (*earlier run*, {r['earlier_run']})" if r.get("earlier_run") else ""
            out.append(f"| {name}{mark} | {s['label']} | {_verdict(name, s)} |")
    out.append("")
    if NOTES.is_file():
        out += [NOTES.read_text().strip(), ""]
    for r in records:
        if not r.get("shapes"):
            continue
        out.append(f"## {r['template']}")
        out.append("")
        out.append(f"Summary: `{r.get('summary', '')}`; baselines: "
                   + ", ".join(f"{k}: {v}" for k, v in (r.get("baselines") or {}).items()))
        out.append("")
        out.append("| shape | impl | correct (max abs err) | median ms | GB/s | % copy BW | TFLOP/s | kernel speedup | timing |")
        out.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for s in r["shapes"]:
            for impl, row in s["results"].items():
                t = row.get("timing") or {}
                chk = row.get("check") or {}
                speed = s.get("speedup", {}).get(impl)
                correct = f"{row.get('correct')} ({_fmt(chk.get('max_abs_err'), '.3g')})" if chk else f"{row.get('status')}: {row.get('message', '')[:80]}"
                out.append(f"| {s['label']} | {impl} | {correct} | {_fmt(t.get('p50_ms'), '.4f')} | {_fmt(row.get('gbps'), '.0f')} | "
                           f"{_fmt(row.get('pct_copy_bw'), '.1f')} | {_fmt(row.get('tflops'), '.0f')} | "
                           f"{_fmt(speed, '.2f') + 'x' if speed else '-'} | {t.get('method', '-')}{' (noisy)' if t.get('noisy') else ''} |")
        out.append("")
    out.append("## GPU correctness checks (`tests/templates/kernel_checks.py` on the H200)")
    out.append("")
    summary = re.findall(r"^=+ (.*(?:passed|failed).*) =+$", checks, re.MULTILINE)
    passed = len(re.findall(r" PASSED", checks))
    failed = re.findall(r"^(.*) FAILED", checks, re.MULTILINE)
    if summary:
        out.append(f"Result: {summary[-1]}.")
    else:
        out.append(f"The run ended before pytest's summary (time limit): {passed} passed, {len(failed)} failed by then.")
    for f in failed[:20]:
        out.append(f"* FAILED {f.strip()}")
    out.append("")
    out.append("## Device")
    out.append("")
    out.append("```")
    out.append(info)
    out.append("```")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    *folders, dest = [Path(a) for a in sys.argv[1:]]
    dest = Path(dest)
    dest.write_text(render(folders[0], folders[1:]))
    print(dest.read_text())
