"""Print diagnoses: readable text, or the JSON the editor and scripts read.

JSON (`--format json`): a list, one object per launch, in the report's order:
`{id, kernel, grid, block, duration_ns, source_file, first_change: {pattern, title, fix,
expected_gain, expected_gain_us, evidence, lines} or null (the one change to make first: the top
pattern no other explains), patterns: [{pattern, title, severity,
impact, evidence, message, fix, lines, explained_by?}], not_assessed: [{pattern, title, status,
lacks, message}] (patterns whose metrics the report does not hold: never read as zero),
limiter: {pattern: "Z", ...} or null (the most likely limiter, when no pattern fired and the
kernel is below 60 % of both roofs),
lines: [hot lines, ranked],
ncu_rules: [...], comparison: {both, tritonify_only, ncu_only}, roofline: {...} (see roofline.py),
findings: [Finding.to_dict()]}`.
Patterns are ordered by estimated impact (causes before the effects they explain).
"""
from __future__ import annotations

import json

from tritonify.diagnostics.ncu.diagnose import Diagnosis
from tritonify.diagnostics.ncu.findings import line_findings


def to_json_list(diagnoses: list[Diagnosis], *, roots=None, extra: dict | None = None) -> list[dict]:
    out = []
    for d in diagnoses:
        obj = d.to_dict()
        obj["findings"] = [f.to_dict() for f in line_findings([d], roots=roots)]
        if extra:
            obj.update(extra)
        out.append(obj)
    return out


def to_json(diagnoses: list[Diagnosis], *, roots=None, extra: dict | None = None) -> str:
    return json.dumps(to_json_list(diagnoses, roots=roots, extra=extra), indent=1)


def _us(ns) -> str:
    return f"{ns / 1000:.1f} us" if isinstance(ns, (int, float)) else "?"


def to_text(diagnoses: list[Diagnosis], *, hot_lines: int = 5) -> str:
    blocks = []
    for d in diagnoses:
        head = (f"launch {d.launch.id}  {d.launch.kernel}  grid {tuple(d.launch.grid)}  block {tuple(d.launch.block)}"
                f"  {_us(d.launch.get('gpu__time_duration.sum'))}")
        rows = [head]
        first = d.first_change()
        if first:
            gain = f"up to {first['expected_gain']:.0%} of this launch's time"
            if first["expected_gain_us"] is not None:
                gain += f", about {first['expected_gain_us']:g} us"
            where = f" (line {', '.join(map(str, first['lines']))})" if first["lines"] and d.profile else ""
            rows.append(f"  change first ({first['pattern']}, {first['title']}){where}: {first['fix']}")
            rows.append(f"     expected gain: {gain}; evidence: {first['evidence']}")
        if not d.hits:
            rows.append("  no bottleneck pattern found")
        if d.limiter:
            rows.append(f"  limiter: {d.limiter.message}")
        for h in d.hits:
            cause = f" (caused by {h.explained_by})" if h.explained_by else ""
            rows.append(f"  {h.pattern.letter}  {h.severity:7}  {h.pattern.title}: {h.message}{cause}"
                        f"  [impact {h.impact:.0%}]")
            where = ", ".join(str(n) for n in h.lines[:3])
            if where and d.profile:
                rows.append(f"     at {d.profile.path}:{where}")
            rows.append(f"     fix: {h.fix_text}")
        for n in d.not_assessed:
            rows.append(f"  {n.pattern.letter}  {'-':7}  {n.pattern.title}: {n.message()}")
        rows.append(f"  roofline: {d.roofline().summary()}")
        cmp = d.to_dict()["comparison"]
        if d.rules:
            theirs = ", ".join(sorted({r.name for r in d.rules if r.type in ('OPT', 'WRN')})) or "none"
            rows.append(f"  ncu rules: {theirs}")
            only_ncu = "; ".join(k + " (" + ", ".join(v) + ")" for k, v in cmp["ncu_only"].items()) or "-"
            agree = ", ".join(cmp["both"]) or "-"
            ours = ", ".join(cmp["tritonify_only"]) or "-"
            rows.append(f"  agree: {agree}; tritonify only: {ours}; ncu only: {only_ncu}")
        hot = d.hot_lines(hot_lines)
        if hot:
            rows.append("  hot lines:")
            for h in hot:
                tag = f" [{''.join(h['patterns'])}]" if h["patterns"] else ""
                rows.append(f"    {h['line']:>5}  {h['sample_share']:6.1%}  {h['source'][:70]}{tag}")
        blocks.append("\n".join(rows))
    return "\n\n".join(blocks)
