"""Text and JSON for `tritonify inspect`, and the one-line summary an inlay hint or code lens shows."""
from __future__ import annotations

import json

from tritonify.diagnostics.compile.result import InspectResult, VariantResult


def summary(v: VariantResult) -> str:
    """`48 regs · 0 spills · 33 KB smem · occ 50 % (registers) · loop 57 SASS` (code lens / inlay hint)."""
    if v.error:
        return "does not compile"
    r, o = v.resources, v.occupancy
    if r is None:
        return "no resource figures"
    parts = [f"{r.registers} regs"]
    parts.append(f"spills {r.spill_stores}/{r.spill_loads} B" if r.spills else "no spills")
    if r.stack and not r.spills:
        parts.append(f"stack {r.stack} B")
    parts.append(f"{_kb(r.shared)} smem")
    if o is not None:
        parts.append(f"occupancy {o.percent:g}% ({o.limiter})")
    return " · ".join(parts)


def _kb(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB".replace(".0 KB", " KB")


def to_text(result: InspectResult) -> str:
    lines = [f"{result.path}:{result.kernel_line}: {result.kernel} on {result.target.name} "
             f"({result.target.example}; {result.target_reason}), triton {result.triton_version or '?'}"
             + (" [cached]" if result.cached else "")]
    if result.error:
        where = f" (line {result.error['line']})" if result.error.get("line") else ""
        lines.append(f"  error{where}: {result.error.get('message')}")
    for v in result.variants:
        lines.append(f"  {v.label} [line {v.position.line}] {v.describe()}")
        if v.error:
            where = f"line {v.error['line']}: " if v.error.get("line") else ""
            lines.append(f"    does not compile: {where}{v.error.get('message')}")
            continue
        lines.append(f"    {summary(v)}")
        r, o = v.resources, v.occupancy
        if r is not None and o is not None:
            lines.append(f"    registers {r.registers}/thread (allocated {o.regs_per_thread_allocated}), "
                         f"stack {r.stack} B, shared {r.shared} B (Triton {r.dynamic_shared} + static {r.static_shared}), "
                         f"{o.blocks_per_sm} block(s)/SM = {o.warps_per_sm}/{o.max_warps_per_sm} warps; "
                         f"blocks allowed by " + ", ".join(f"{k} {n}" for k, n in o.limits.items()))
        for kind in ("ptx", "sass"):
            listing = v.listing(kind, result.compiled_path)
            if listing is not None:
                main = listing.main_loop
                loop = (f", main loop {main.instructions} (lines {main.source_lines[0]}-{main.source_lines[1]})"
                        if main and main.source_lines else ", no loop")
                lines.append(f"    {kind.upper()}: {listing.instructions} instructions{loop}")
        for note in v.notes:
            lines.append(f"    note: {note}")
    if result.assumptions:
        lines.append("  assumed:")
        lines += [f"    - {a}" for a in result.assumptions]
    for s in result.skipped:
        lines.append(f"  skipped line {s['line']} of the file: {s['error']}")
    return "\n".join(lines)


def to_json(result: InspectResult, findings=()) -> str:
    d = result.to_dict()
    d["findings"] = [f.to_dict() for f in findings]
    return json.dumps(d, indent=2)
