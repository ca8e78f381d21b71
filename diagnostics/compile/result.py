"""What a compile inspection found, as data: the result of `tritonify.tools.compile.service`'s
`inspect_kernel` (one `VariantResult` per autotune config), and its assembly listings as the
read-only view an editor shows (`assembly_view`). Pure: nothing here compiles or starts anything;
`findings.py` and `render.py` read these.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from tritonify.diagnostics.compile.asm import Listing, parse_ptx, parse_sass
from tritonify.diagnostics.compile.occupancy import Occupancy
from tritonify.diagnostics.compile.resources import Resources
from tritonify.diagnostics.compile.signature import ConfigSite
from tritonify.diagnostics.compile.targets import Arch


class InspectError(ValueError):
    """Input that cannot be inspected (no such kernel, untrusted workspace, bad override): one line."""


@dataclass
class Position:
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass
class VariantResult:
    """One compiled specialisation: an autotune config, the launch's values, or --config."""

    label: str
    index: int | None                  # autotune config index
    position: Position                 # its triton.Config(...) call, else the kernel's def
    site: ConfigSite | None
    constexprs: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    resources: Resources | None = None
    occupancy: Occupancy | None = None
    listings: dict = field(default_factory=dict)      # kind -> raw text
    error: dict | None = None                          # {"message", "line", "column", "kind"}
    notes: list = field(default_factory=list)

    @property
    def num_warps(self) -> int:
        return int(self.options.get("num_warps", 4))

    def listing(self, kind: str, source_file: str | None = None) -> Listing | None:
        text = self.listings.get(kind)
        if not text:
            return None
        return parse_ptx(text, source_file) if kind == "ptx" else parse_sass(text, source_file) if kind == "sass" else None

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in self.constexprs.items()]
        parts += [f"{k}={v}" for k, v in self.options.items() if k in ("num_warps", "num_stages", "maxnreg")]
        return ", ".join(parts)

    def to_dict(self, source_file: str | None = None) -> dict:
        d = {
            "label": self.label, "index": self.index, "line": self.position.line,
            "constexprs": self.constexprs, "options": self.options,
            "resources": self.resources.to_dict() if self.resources else None,
            "occupancy": self.occupancy.to_dict() if self.occupancy else None,
            "error": self.error, "notes": self.notes,
        }
        for kind in ("ptx", "sass"):
            listing = self.listing(kind, source_file)
            if listing is not None:
                main = listing.main_loop
                d[f"{kind}_instructions"] = listing.instructions
                d[f"{kind}_main_loop"] = main.to_dict() if main else None
        return d


@dataclass
class InspectResult:
    path: str
    kernel: str
    kernel_line: int
    target: Arch
    target_reason: str
    assumptions: list
    variants: list
    skipped: list = field(default_factory=list)       # statements of the file the worker could not run
    error: dict | None = None                           # the whole run failed
    triton_version: str | None = None
    cached: bool = False
    seconds: float = 0.0
    compiled_path: str | None = None                    # the copy the listings' line info names

    def to_dict(self) -> dict:
        return {
            "path": self.path, "kernel": self.kernel, "line": self.kernel_line, "target": self.target.name,
            "target_reason": self.target_reason, "triton_version": self.triton_version,
            "assumptions": self.assumptions, "skipped": self.skipped, "error": self.error,
            "cached": self.cached, "seconds": round(self.seconds, 3),
            "variants": [v.to_dict(self.compiled_path) for v in self.variants],
        }


@dataclass
class AssemblyView:
    """A listing for a read-only editor tab: its text, and for each of its lines the Python line
    it came from (None for directives), so the editor can highlight both ways."""

    kind: str
    title: str
    text: str
    line_map: list                     # listing line (index + 1) -> source line or None
    by_source_line: dict               # source line -> listing lines (1-based)
    main_loop: dict | None


def assembly_view(result: InspectResult, kind: str = "sass", variant: int = 0) -> AssemblyView:
    """The PTX, SASS or TTGIR of one compiled variant of an `inspect_kernel` result."""
    if not result.variants or variant >= len(result.variants):
        raise InspectError("nothing was compiled")
    v = result.variants[variant]
    if v.error:
        raise InspectError(f"{v.label} did not compile: {v.error.get('message')}")
    title = f"{result.kernel} [{v.describe()}] {kind.upper()} {result.target.name}"
    if kind in ("ptx", "sass"):
        listing = v.listing(kind, result.compiled_path)
        if listing is None:
            raise InspectError(f"no {kind} was requested or produced")
        main = listing.main_loop
        return AssemblyView(kind, title, listing.text(), listing.line_map(), listing.by_source_line(),
                            main.to_dict() if main else None)
    text = v.listings.get(kind)
    if not text:
        raise InspectError(f"no {kind} was requested or produced")
    return AssemblyView(kind, title, text, _mlir_line_map(text), {}, None)


def _mlir_line_map(text: str) -> list:
    """TTGIR/TTIR lines carry `loc(#locN)` references to `#locN = loc("file":LINE:COL)` entries."""
    import re

    defs = {m.group(1): int(m.group(2)) for m in re.finditer(r'^(#loc\d*) = loc\("[^"]*":(\d+):\d+\)', text, re.MULTILINE)}
    out = []
    for line in text.splitlines():
        m = re.search(r"loc\((#loc\d*)\)\s*$", line)
        out.append(defs.get(m.group(1)) if m else None)
    return out
