"""PTX and SASS listings: which Python line each instruction came from, and the loops.

* PTX carries `.loc FILE LINE COL` directives (Triton always emits line info); every instruction
  after one belongs to that line.
* SASS comes from `nvdisasm -g -c` on the cubin, which writes `//## File "...", line N` before
  the instructions of each line (ptxas keeps the line table because Triton passes `-lineinfo`).
* A loop is a backward branch: a `bra`/`BRA` whose target label comes earlier in the listing.
  The "main loop" is the innermost loop with the most instructions: where a tiled kernel spends
  its time (the K loop of a matmul, the chunk loop of an online softmax).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_PTX_LABEL = re.compile(r"^(\$?[\w.$]+):")
_PTX_BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$?[\w.$]+)\s*;")
_SASS_LOC = re.compile(r'^\s*//## File "([^"]*)", line (\d+)')
_SASS_INSTR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")
_SASS_LABEL = re.compile(r"^(\.L_x_\d+):")
_SASS_BRANCH = re.compile(r"\bBRA\s+`?\(?(\.L_x_\d+)\)?")


@dataclass
class AsmLine:
    text: str
    source_line: int | None      # 1-based line of the kernel's file, None for directives/labels
    instruction: bool


@dataclass
class Loop:
    start: int                    # index in the listing of the label
    end: int                      # index of the backward branch
    instructions: int
    source_lines: tuple[int, int] | None   # the range of Python lines its instructions come from

    def contains(self, other: Loop) -> bool:
        return self is not other and self.start <= other.start and other.end <= self.end

    def to_dict(self) -> dict:
        return {"instructions": self.instructions,
                "source_lines": list(self.source_lines) if self.source_lines else None}


@dataclass
class Listing:
    kind: str                     # "ptx" or "sass"
    lines: list[AsmLine] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)

    @property
    def instructions(self) -> int:
        return sum(1 for line in self.lines if line.instruction)

    @property
    def main_loop(self) -> Loop | None:
        innermost = [lp for lp in self.loops if not any(lp.contains(o) for o in self.loops)]
        return max(innermost, key=lambda lp: lp.instructions, default=None)

    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)

    def line_map(self) -> list[int | None]:
        """Source line of each listing line (index = listing line - 1): what a read-only editor tab
        uses to highlight the Python line under the cursor."""
        return [line.source_line for line in self.lines]

    def by_source_line(self) -> dict[int, list[int]]:
        """Python line -> 1-based listing lines of its instructions."""
        out: dict[int, list[int]] = {}
        for i, line in enumerate(self.lines, start=1):
            if line.instruction and line.source_line is not None:
                out.setdefault(line.source_line, []).append(i)
        return out


def _find_loops(lines: list[AsmLine], labels: dict[str, int], branches: list[tuple[int, str]]) -> list[Loop]:
    loops = []
    for at, target in branches:
        start = labels.get(target)
        if start is None or start >= at:
            continue
        body = lines[start:at + 1]
        count = sum(1 for line in body if line.instruction)
        if count < 2:  # `BRA self` at the end of a SASS function is a trap, not a loop
            continue
        src = [line.source_line for line in body if line.instruction and line.source_line]
        loops.append(Loop(start, at, count, (min(src), max(src)) if src else None))
    return loops


def parse_ptx(text: str, source_file: str | None = None) -> Listing:
    """Listing of Triton's PTX. `source_file`: only `.loc`s of this file count (None: file 1)."""
    raw = (text or "").splitlines()
    files = {m.group(1): m.group(2) for m in map(_PTX_FILE.match, raw) if m}
    wanted = None
    if source_file:
        wanted = next((k for k, v in files.items() if v == source_file or v.endswith("/" + source_file)), None)
    wanted = wanted or "1"
    listing = Listing("ptx")
    labels: dict[str, int] = {}
    branches: list[tuple[int, str]] = []
    current: int | None = None
    in_debug = False
    for text_line in raw:
        stripped = text_line.strip()
        if stripped.startswith(".section") and ".debug" in stripped:
            in_debug = True
        loc = _PTX_LOC.match(text_line)
        if loc:
            current = int(loc.group(2)) if loc.group(1) == wanted and int(loc.group(2)) > 0 else current
            listing.lines.append(AsmLine(text_line, None, False))
            continue
        label = _PTX_LABEL.match(stripped)
        if label and not text_line[:1].isspace():
            labels[label.group(1)] = len(listing.lines)
            listing.lines.append(AsmLine(text_line, None, False))
            continue
        # vector operands (`wgmma ... {%r1, %r2}, ...;`) have braces too; block braces stand alone
        is_instr = not in_debug and stripped.endswith(";") and not stripped.startswith((".", "//", "{", "}"))
        if is_instr:
            branch = _PTX_BRANCH.search(stripped)
            if branch:
                branches.append((len(listing.lines), branch.group(1)))
        listing.lines.append(AsmLine(text_line, current if is_instr else None, is_instr))
    listing.loops = _find_loops(listing.lines, labels, branches)
    return listing


def parse_sass(text: str, source_file: str | None = None) -> Listing:
    """Listing of `nvdisasm -g -c` output."""
    listing = Listing("sass")
    labels: dict[str, int] = {}
    branches: list[tuple[int, str]] = []
    current: int | None = None
    for text_line in (text or "").splitlines():
        loc = _SASS_LOC.match(text_line)
        if loc:
            if source_file is None or loc.group(1) == source_file or loc.group(1).endswith("/" + source_file):
                current = int(loc.group(2))
            else:
                current = None
            listing.lines.append(AsmLine(text_line, None, False))
            continue
        label = _SASS_LABEL.match(text_line.strip())
        if label:
            labels[label.group(1)] = len(listing.lines)
            listing.lines.append(AsmLine(text_line, None, False))
            continue
        instr = _SASS_INSTR.match(text_line)
        if instr:
            branch = _SASS_BRANCH.search(instr.group(1))
            if branch:
                branches.append((len(listing.lines), branch.group(1)))
            listing.lines.append(AsmLine(text_line, current, True))
        else:
            listing.lines.append(AsmLine(text_line, None, False))
    listing.loops = _find_loops(listing.lines, labels, branches)
    return listing


def annotate(listing: Listing, source_lines: list[str]) -> str:
    """The listing with each Python line printed above its instructions (Compiler Explorer's view
    as text, for the CLI's `--show ... --per-line`)."""
    out = []
    last = None
    for line in listing.lines:
        if line.instruction and line.source_line and line.source_line != last:
            last = line.source_line
            code = source_lines[last - 1].strip() if 0 < last <= len(source_lines) else ""
            out.append(f"# ---- line {last}: {code}")
        out.append(line.text)
    return "\n".join(out)
