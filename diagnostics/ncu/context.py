"""What a pattern detector sees: one launch's metrics, ncu's rules for it, and its source lines."""
from __future__ import annotations

from dataclasses import dataclass, field

from tritonify.diagnostics.ncu.details_page import NcuRule
from tritonify.diagnostics.ncu.lines import LineProfile, LineStats
from tritonify.diagnostics.ncu.metrics import CPI, MEMORY_UNITS, STALL, candidates
from tritonify.diagnostics.ncu.raw_page import Launch

H200_SMS = 132
# the stand-ins for the cycles per issued instruction where WarpStateStats was not collected
WARPS_ACTIVE = "sm__warps_active.avg.per_cycle_active"
SM_CYCLES = "sm__cycles_active.sum"
INSTRUCTIONS = "smsp__inst_executed.sum"
# WarpStateStats reason -> the source page's sampling column (`stall_<name>`)
SAMPLED_REASON = {"long_scoreboard": "long_sb", "short_scoreboard": "short_sb", "lg_throttle": "lg",
                  "mio_throttle": "mio", "math_pipe_throttle": "math", "no_instruction": "no_inst",
                  "tex_throttle": "tex", "imc_miss": "imc", "sleeping": "sleep"}
_REQUIRED = object()


class Missing(LookupError):
    """A metric a detector needs is not in the report (under any of its names). The pattern is
    then "not assessed", never decided on a zero that was not measured."""

    def __init__(self, names: tuple[str, ...] | list[str]):
        super().__init__(", ".join(names))
        self.names = tuple(names)


@dataclass
class NotAssessed:
    pattern: "Pattern"
    lacks: tuple[str, ...]

    def message(self) -> str:
        return f"not assessed: the report lacks {' / '.join(self.lacks[:3])}"

    def to_dict(self) -> dict:
        return {"pattern": self.pattern.letter, "title": self.pattern.title, "status": "not assessed",
                "lacks": list(self.lacks), "message": self.message()}


@dataclass(frozen=True)
class Pattern:
    letter: str
    title: str
    ncu_rules: tuple[str, ...] = ()    # ncu guided-analysis rules that speak to the same thing
    fix: str = ""                      # one line: what to change


@dataclass
class Hit:
    """A pattern found on a launch. `impact` is the estimated share of the kernel's time the fix
    could recover (0..1); it orders the hits and sets the severity."""

    pattern: Pattern
    impact: float
    evidence: dict[str, float | str]
    message: str
    lines: list[int] = field(default_factory=list)   # where the cost is, best first
    explained_by: str | None = None                   # another hit that causes this one
    fix: str | None = None                            # this cause's fix, when not the pattern's

    @property
    def fix_text(self) -> str:
        return self.fix or self.pattern.fix

    @property
    def severity(self) -> str:
        return "warning" if self.impact >= 0.2 else "info"

    def to_dict(self) -> dict:
        return {
            "pattern": self.pattern.letter, "title": self.pattern.title, "severity": self.severity,
            "impact": round(self.impact, 3),
            "evidence": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in self.evidence.items()},
            "message": self.message, "fix": self.fix_text, "lines": self.lines,
            **({"explained_by": self.explained_by} if self.explained_by else {}),
        }


@dataclass
class Context:
    launch: Launch
    rules: list[NcuRule] = field(default_factory=list)
    profile: LineProfile | None = None

    def m(self, name: str, default: float = _REQUIRED) -> float:  # type: ignore[assignment]
        """A metric by its sm_90 name, falling back to its sm_80/sm_100 and other-capture names
        (declared by the pattern modules). Absent without a `default`: raises `Missing`, so a
        metric the report does not hold is never read as zero."""
        names = candidates(name)
        value = self.launch.get(*names)
        if value is None:
            if default is _REQUIRED:
                raise Missing(names)
            return default
        return value

    def opt(self, name: str) -> float | None:
        """A metric for the evidence only: None when the report lacks it."""
        return self.launch.get(*candidates(name))

    def has(self, name: str) -> bool:
        return self.launch.get(*candidates(name)) is not None

    def total(self, *names: str) -> float:
        """The sum of metrics that are all needed (Missing names every one that is absent)."""
        absent = [n for n in names if not self.has(n)]
        if absent:
            raise Missing(tuple(absent))
        return sum(self.m(n) for n in names)

    @property
    def sm_count(self) -> int:
        return int(self.m("launch__sm_count", H200_SMS)) or H200_SMS

    def stall_share(self, reason: str) -> float:
        """Cycles stalled for `reason` per issued instruction, as a share of all cycles per issued
        instruction (what ncu's CPIStall rule computes). Without WarpStateStats (`--set detailed`),
        the share of the source page's warp-state samples with that reason, which estimates the same
        quantity (each sample is one warp's state at one instant)."""
        if self.has(CPI) and self.has(STALL.format(reason)):
            cpi = self.m(CPI)
            return self.m(STALL.format(reason)) / cpi if cpi > 0 else 0.0
        sampled = self.sampled_stall_share(reason)
        if sampled is None:
            raise Missing((CPI, STALL.format(reason)))
        return sampled

    def sampled_stall_share(self, reason: str) -> float | None:
        if self.profile is None:
            return None
        total = sum(s.samples for s in self.profile.lines.values())
        column = SAMPLED_REASON.get(reason, reason)
        if not total:
            return None
        return sum(s.stalls.get(column, 0.0) for s in self.profile.lines.values()) / total

    def sector_bytes(self, access: str) -> float | None:
        """Useful bytes per 32-byte L2 sector of global `access` ("load" or "store"), from the source
        page: 32 x (1 - excessive / theoretical sectors), ncu's UncoalescedGlobalAccess measure (the
        sectors a perfectly coalesced access would need, over those it needed). Raises Missing without
        a source page; None when the kernel has no such access."""
        if self.profile is None:
            raise Missing(("a source page (SourceCounters: L2 Theoretical Sectors Global)",))
        lines = self.profile.lines.values()
        total = sum(s.load_sectors if access == "load" else s.store_sectors for s in lines)
        excessive = sum(s.excessive_load_sectors if access == "load" else s.excessive_store_sectors for s in lines)
        return 32.0 * (1 - excessive / total) if total > 0 else None

    def useful_bytes_per_sector(self, access: str, average_metric: str) -> tuple[float | None, str]:
        """(useful bytes per sector of global `access`, the measure it came from). From the source page
        where the report has one (`sector_bytes`: the sectors an access needed beyond the fewest its
        addresses allow, weighted by sectors, which is the traffic a layout change can save), else ncu's
        average ratio `average_metric`. The ratio also counts the sectors of narrow accesses that no
        layout could widen: on real kernels (vLLM's paged decode attention, 2026-12-02) the block-table
        and query loads that all lanes of a warp share, or a per-row scalar store (Liger's KL
        divergence), drove it to 4-6 bytes while the source page showed no excessive sector and the
        kernel ran at 77-94% of the DRAM roof. Patterns C (loads) and D (stores) read it."""
        from_page = f"{access}_bytes_per_sector_from_source_counters"
        if self.profile is not None:
            used = self.sector_bytes(access)
            if used is not None:
                return used, from_page
        if self.has(average_metric):
            return self.m(average_metric), average_metric
        return self.sector_bytes(access), from_page

    def cycles_per_instruction(self) -> float:
        """Cycles between two issued instructions of a warp (ncu's warp latency per issued
        instruction). Without WarpStateStats (`--set detailed`): active warps per SM and cycle
        over instructions per SM and cycle (Little's law), the latter from absolute counts so
        that a CSV's two decimals cannot round it to zero. On the 31 launches of the H200
        `--set full` fixture this is within 4.1% of the measured ratio on 29 of them (9% and 15% on the other two)."""
        if self.has(CPI):
            return self.m(CPI)
        warps, cycles, inst = self.opt(WARPS_ACTIVE), self.opt(SM_CYCLES), self.opt(INSTRUCTIONS)
        if warps is None or not cycles or not inst:
            raise Missing((CPI, WARPS_ACTIVE, SM_CYCLES, INSTRUCTIONS))
        return warps * cycles / inst

    def stall_cycles(self, reason: str) -> float:
        """Cycles per issued instruction stalled for `reason`. Without WarpStateStats: the
        sampled share of that reason times `cycles_per_instruction()`."""
        if self.has(STALL.format(reason)):
            return self.m(STALL.format(reason))
        sampled = self.sampled_stall_share(reason)
        if sampled is None:
            raise Missing((STALL.format(reason),))
        return sampled * self.cycles_per_instruction()

    @property
    def memory_pct(self) -> float:
        """The busiest memory unit, in % of its peak (DRAM, L2 or L1)."""
        values = [v for n in MEMORY_UNITS if (v := self.opt(n)) is not None]
        if not values:
            raise Missing(MEMORY_UNITS)
        return max(values)

    @property
    def sm_pct(self) -> float:
        return self.m("sm__throughput.avg.pct_of_peak_sustained_elapsed")

    def rule(self, name: str) -> NcuRule | None:
        for r in self.rules:
            if r.name == name:
                return r
        return None

    def lines_by(self, key, n: int = 3, minimum: float = 0.0) -> list[int]:
        """The kernel's lines ranked by `key(LineStats)`, best first (empty without a source page)."""
        if self.profile is None:
            return []
        return [s.line for s in self.profile.ranked(key, minimum)[:n]]

    def def_line(self) -> list[int]:
        return [self.profile.def_line] if self.profile and self.profile.def_line else []

    def line(self, number: int) -> LineStats | None:
        return self.profile.lines.get(number) if self.profile else None
