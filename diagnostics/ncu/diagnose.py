"""Run the pattern detectors on parsed ncu pages and order what they find by impact.

    diagnoses = diagnose_pages(raw_csv_text, details_text, {"kernel": source_csv_text})
    json.dumps([d.to_dict() for d in diagnoses])

A pattern that another one causes (low achieved occupancy under a small grid, long-scoreboard
stalls under uncoalesced loads or spills) is kept but marked `explained_by` and ranked after
the cause, so the first pattern of a launch is the one to fix first.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from tritonify.diagnostics.ncu.context import Context, Hit, Missing, NotAssessed
from tritonify.diagnostics.ncu.details_page import NcuRule, by_launch, parse_details
from tritonify.diagnostics.ncu.families import family_fix
from tritonify.diagnostics.ncu.lines import LineProfile, attribute
from tritonify.diagnostics.ncu.ncu_rules import compare
from tritonify.diagnostics.ncu.paths import read_local
from tritonify.diagnostics.ncu.patterns import by_letter, detectors, explains
from tritonify.diagnostics.ncu.raw_page import Launch, parse_raw
from tritonify.diagnostics.ncu.roofline import Roofline, roofline_point
from tritonify.diagnostics.ncu.source_page import SourcePage, parse_source



@dataclass
class Diagnosis:
    launch: Launch
    hits: list[Hit]
    rules: list[NcuRule] = field(default_factory=list)
    profile: LineProfile | None = None
    not_assessed: list[NotAssessed] = field(default_factory=list)
    limiter: Hit | None = None      # named when no pattern fired and the kernel is off both roofs

    @property
    def letters(self) -> list[str]:
        return [h.pattern.letter for h in self.hits]

    def primary(self) -> list[Hit]:
        return [h for h in self.hits if not h.explained_by]

    def hot_lines(self, n: int = 10) -> list[dict]:
        if self.profile is None:
            return []
        total = sum(s.attributed_samples for s in self.profile.lines.values()) or 1.0
        out = []
        for rank, stats in enumerate(self.profile.hot_lines(n), 1):
            letters = [h.pattern.letter for h in self.hits if stats.line in h.lines]
            out.append({"rank": rank, **stats.to_dict(), "sample_share": round(stats.attributed_samples / total, 4),
                        "patterns": letters})
        return out

    def roofline(self) -> Roofline:
        return roofline_point(self.launch)

    def first_change(self) -> dict | None:
        """The one change to make first: the top pattern that no other explains, its fix, the
        expected gain (its impact: the share of this launch's time the fix could recover, also in
        microseconds) and the evidence it rests on. None when no pattern fired (the limiter line or
        the roofline then says where the time goes)."""
        primary = self.primary()
        if not primary:
            return None
        hit = primary[0]
        ns = self.launch.get("gpu__time_duration.sum")
        return {"pattern": hit.pattern.letter, "title": hit.pattern.title, "fix": hit.fix_text,
                "expected_gain": round(hit.impact, 3),
                "expected_gain_us": round(hit.impact * ns / 1000, 1) if isinstance(ns, (int, float)) else None,
                "evidence": hit.message, "lines": hit.lines[:3]}

    def to_dict(self) -> dict:
        theirs = [r.to_dict() for r in self.rules if r.type in ("OPT", "WRN")]
        return {
            "id": self.launch.id,
            "kernel": self.launch.kernel,
            "grid": list(self.launch.grid), "block": list(self.launch.block),
            "duration_ns": self.launch.get("gpu__time_duration.sum"),
            "source_file": self.profile.path if self.profile else None,
            "first_change": self.first_change(),
            "patterns": [h.to_dict() for h in self.hits],
            "not_assessed": [n.to_dict() for n in self.not_assessed],
            "limiter": self.limiter.to_dict() if self.limiter else None,
            "lines": self.hot_lines(),
            "ncu_rules": theirs,
            "comparison": compare(set(self.letters), self.rules),
            "roofline": self.roofline().to_dict(),
        }


def detector_of(hit: Hit):
    return by_letter(hit.pattern.letter)


def diagnose_launch(launch: Launch, rules: list[NcuRule] | None = None,
                    source: SourcePage | None = None, source_text: str | None = None) -> Diagnosis:
    profile = attribute(source, source_text=source_text) if source is not None else None
    ctx = Context(launch, list(rules or []), profile)
    hits: list[Hit] = []
    missing: list[NotAssessed] = []
    mods = detectors()
    for last_resort in (False, True):
        if last_resort and hits:
            break  # the limiter speaks only when no pattern did
        for mod in mods:
            if bool(getattr(mod, "FALLBACK_ONLY", False)) != last_resort:
                continue
            try:
                hit = mod.detect(ctx)
            except Missing as exc:
                missing.append(NotAssessed(mod.PATTERN, exc.names))
                continue
            except (ArithmeticError, TypeError, ValueError):
                missing.append(NotAssessed(mod.PATTERN, ("usable values (a metric held an unexpected value)",)))
                continue
            if hit is not None:
                hits.append(hit)
    limiter = next((h for h in hits if getattr(detector_of(h), "FALLBACK_ONLY", False)), None)
    hits = [h for h in hits if h is not limiter]
    found = {h.pattern.letter for h in hits}
    causes = {cause: list(effects) for cause, effects in explains().items()}
    overrides: dict[str, set[str]] = {}
    for h in hits:  # a cause that explains more on this launch (E with a dependent load chain explains C)
        more = getattr(detector_of(h), "explains_for", None)
        if more and more(h):
            causes.setdefault(h.pattern.letter, []).extend(more(h))
            overrides[h.pattern.letter] = set(more(h))   # ... and is then not explained by them
    for h in hits:
        for cause, effects in causes.items():
            if cause in overrides.get(h.pattern.letter, ()):
                continue
            if cause in found and h.pattern.letter in effects and cause != h.pattern.letter:
                h.explained_by = cause
                break
    for h in hits:  # a kernel family with its own fix for this pattern (a convolution: NHWC, padded channels)
        h.fix = h.fix or family_fix(h.pattern.letter, launch.kernel)
    hits.sort(key=lambda h: (h.explained_by is not None, -h.impact, h.pattern.letter))
    return Diagnosis(launch, hits, list(rules or []), profile, missing, limiter)


def diagnose_pages(raw_text: str, details_text: str | None = None,
                   sources: dict[str, str] | list[str] | None = None,
                   source_texts: dict[str, str] | None = None,
                   roots: list[str] | None = None) -> list[Diagnosis]:
    """Diagnose every launch of a raw page. `sources` are source-page CSVs (matched to launches by
    the function name they name); `source_texts` maps a kernel file's path to its text, else the
    file is looked up locally (under `roots` when the report came from another machine)."""
    launches = parse_raw(raw_text)
    rules = by_launch(parse_details(details_text)) if details_text else {}
    pages = [parse_source(text) for text in (sources.values() if isinstance(sources, dict) else sources or [])]
    return diagnose_parsed(launches, rules, pages, source_texts, roots)


def diagnose_parsed(launches: list[Launch], rules: dict[str, list[NcuRule]] | None = None,
                    pages: list[SourcePage] | None = None, source_texts: dict[str, str] | None = None,
                    roots: list[str] | None = None) -> list[Diagnosis]:
    """Diagnose launches read either way (CSV pages, or the report through `report_reader`)."""
    by_function: dict[str, SourcePage] = {}
    for page in pages or []:
        by_function.setdefault(page.function, page)
    out = []
    for launch in launches:
        page = by_function.get(launch.kernel)
        text = None
        path = page.kernel_file() if page is not None else None
        if path:
            text = (source_texts or {}).get(path) or read_local(path, roots)
        out.append(diagnose_launch(launch, (rules or {}).get(launch.id, []), page, text))
    return out
