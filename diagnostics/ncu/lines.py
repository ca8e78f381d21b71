"""Attribute the source page's per-instruction counters to the lines of the kernel's own file.

Every SASS instruction on the page carries its warp-stall samples, excessive global sectors,
shared-memory wavefronts, address space and thread counts. They are summed per line of the file
that defines the kernel. Instructions that ncu attributes to inlined library code (Triton's
`triton/language/standard.py` for `tl.sum`/`tl.max`, CUDA's `sm_20_atomic_functions.hpp`)
are folded into the user's line nearest to them in the instruction stream, which is where the
library call was inlined: the call site, not the library, is what the user can change.
"""
from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass, field

from tritonify.diagnostics.ncu.source_page import SassInstruction, SourcePage
from tritonify.diagnostics.source import split_lines

SAMPLES = "Warp Stall Sampling (All Samples)"
INST = "Instructions Executed"
THREAD_INST = "Thread Instructions Executed"
EXCESSIVE = "L2 Theoretical Sectors Global Excessive"
SECTORS = "L2 Theoretical Sectors Global"
SHARED_EXCESSIVE = "L1 Wavefronts Shared Excessive"
SHARED_WAVEFRONTS = "L1 Wavefronts Shared"
DIVERGENT = "Divergent Branches"


@dataclass
class LineStats:
    line: int
    text: str = ""
    samples: float = 0.0
    stalls: Counter = field(default_factory=Counter)
    inst: float = 0.0
    thread_inst: float = 0.0
    excessive_load_sectors: float = 0.0
    excessive_store_sectors: float = 0.0
    global_sectors: float = 0.0
    load_sectors: float = 0.0       # L2 theoretical sectors of global loads (stores below)
    store_sectors: float = 0.0
    shared_excessive_wavefronts: float = 0.0
    shared_wavefronts: float = 0.0
    local_inst: float = 0.0
    divergent_branches: float = 0.0
    barrier_wait: float = 0.0       # barrier samples, moved back onto the BAR instruction's line
    barrier_moved_out: float = 0.0  # barrier samples of this line moved to the BAR's line
    barrier_moved_in: float = 0.0
    long_sb_moved_out: float = 0.0  # long-scoreboard samples of this line's consumers, moved to their loads
    long_sb_producer: float = 0.0   # long-scoreboard samples caused by this line's loads
    opcodes: Counter = field(default_factory=Counter)
    from_library: bool = False

    @property
    def load_latency(self) -> float:
        """Long-scoreboard samples charged to this line's loads (plus waits not traced to a load)."""
        return self.long_sb_producer + self.stalls.get("long_sb", 0.0) - self.long_sb_moved_out

    @property
    def attributed_samples(self) -> float:
        """Samples with long-scoreboard waits charged to the load that caused them (as the
        "Attributed Stalls" of newer Nsight Compute versions do) and barrier waits charged to the
        barrier, not to the instruction that was waiting."""
        return (self.samples - self.long_sb_moved_out + self.long_sb_producer
                - self.barrier_moved_out + self.barrier_moved_in)

    @property
    def threads_per_inst(self) -> float | None:
        """Per-line average, computed from the sums: the page's own "Avg. Threads Executed" on a
        source-line row is a sum over the line's instructions, not an average."""
        return self.thread_inst / self.inst if self.inst else None

    def count(self, prefixes: tuple[str, ...]) -> float:
        return sum(n for op, n in self.opcodes.items() if op.split(".")[0] in prefixes)

    def to_dict(self) -> dict:
        top = [{"reason": r, "samples": int(n)} for r, n in self.stalls.most_common(3) if n]
        return {
            "line": self.line, "source": self.text.strip(), "samples": int(self.samples),
            "attributed_samples": int(self.attributed_samples),
            "top_stalls": top, "excessive_global_sectors": int(self.excessive_load_sectors + self.excessive_store_sectors),
            "shared_excessive_wavefronts": int(self.shared_excessive_wavefronts),
            "local_memory_instructions": int(self.local_inst),
            "divergent_branches": int(self.divergent_branches),
            "threads_per_instruction": round(self.threads_per_inst, 2) if self.threads_per_inst else None,
        }


@dataclass
class LineProfile:
    path: str
    function: str
    def_line: int | None
    lines: dict[int, LineStats]
    # (line of a global load, line of a later global load whose address is computed from its result):
    # a dependent load chain, the pointer chase or indexed gather whose latency no layout removes
    dependent_loads: list[tuple[int, int]] = field(default_factory=list)

    def ranked(self, key, minimum: float = 0.0) -> list[LineStats]:
        rows = [s for s in self.lines.values() if key(s) > minimum]
        return sorted(rows, key=lambda s: (-key(s), s.line))

    def hot_lines(self, n: int = 10) -> list[LineStats]:
        """Lines ranked by attributed samples: a load's latency counts on the load's line."""
        return self.ranked(lambda s: s.attributed_samples)[:n]


def _stall_reason(column: str) -> str | None:
    if column.startswith("stall_") and "(Not Issued)" not in column:
        return column[len("stall_"):]
    return None


def attribute(page: SourcePage, kernel_file: str | None = None, source_text: str | None = None) -> LineProfile | None:
    """Sum the page's per-instruction counters per line of the kernel's file.

    `source_text` is the kernel file's text when it can be read: the page lists only lines that
    own instructions, so a `tl.max(...)` line whose code is all inlined library code appears
    only there, and library instructions can then be folded onto it.
    """
    path = kernel_file or page.kernel_file()
    if path is None:
        return None
    texts = {ln.line: ln.text for ln in page.lines if ln.path == path}
    all_texts = dict(texts)
    if source_text:
        all_texts.update({n: t for n, t in enumerate(split_lines(source_text), 1)})
    own = sorted((i for i in page.instructions if i.path == path), key=lambda i: i.address)
    if not own:
        return None
    addresses = [i.address for i in own]
    stats: dict[int, LineStats] = {}

    library_texts = {(ln.path, ln.line): ln.text for ln in page.lines if ln.path != path}
    call_sites: dict[str, list[int]] = {}

    def target(ins: SassInstruction) -> tuple[int, bool]:
        if ins.path == path:
            return ins.line, False
        k = bisect.bisect_left(addresses, ins.address)
        near = [own[j] for j in (k - 1, k) if 0 <= j < len(own)]
        best = min(near, key=lambda o: abs(o.address - ins.address)).line
        hint = _library_hint(library_texts.get((ins.path, ins.line), ""))
        if hint:
            if hint not in call_sites:
                call_sites[hint] = [n for n, t in all_texts.items() if re.search(rf"\.{hint}\(", t)]
            calls = call_sites[hint]
            if calls:
                return min(calls, key=lambda n: (abs(n - best), n)), True
        return best, True

    barrier_line: dict[int, int] = {}     # address -> line of the BAR that this instruction waited at
    ordered = sorted(page.instructions, key=lambda i: i.address)
    for prev, ins in zip(ordered, ordered[1:]):
        if prev.opcode.startswith("BAR") and not ins.opcode.startswith("BAR"):
            barrier_line[ins.address] = target(prev)[0]

    producer_of = _long_scoreboard_producers(ordered)

    for ins in page.instructions:
        line, via_library = target(ins)
        s = stats.get(line)
        if s is None:
            s = stats[line] = LineStats(line, all_texts.get(line, ""))
        s.from_library |= via_library
        v = ins.value
        s.samples += v(SAMPLES)
        for column, value in ins.values.items():
            reason = _stall_reason(column)
            if reason and value:
                s.stalls[reason] += value
        s.inst += v(INST)
        s.thread_inst += v(THREAD_INST)
        if ins.access.startswith("Store"):
            s.excessive_store_sectors += v(EXCESSIVE)
            s.store_sectors += v(SECTORS)
        else:
            s.excessive_load_sectors += v(EXCESSIVE)
            s.load_sectors += v(SECTORS)
        s.global_sectors += v(SECTORS)
        s.shared_excessive_wavefronts += v(SHARED_EXCESSIVE)
        s.shared_wavefronts += v(SHARED_WAVEFRONTS)
        if ins.address_space == "Local":
            s.local_inst += v(INST)
        s.divergent_branches += v(DIVERGENT)
        waited_on_load = v("stall_long_sb")
        producer = producer_of.get(ins.address)
        if waited_on_load and producer is not None:
            owner = target(producer)[0]
            if owner not in stats:
                stats[owner] = LineStats(owner, all_texts.get(owner, ""))
            s.long_sb_moved_out += waited_on_load
            stats[owner].long_sb_producer += waited_on_load
        # ncu samples a warp waiting at a barrier on the instruction after BAR.SYNC; the BAR's
        # own line (the __syncthreads / tl.debug_barrier) is the one to change.
        waited = v("stall_barrier")
        if waited:
            owner = barrier_line.get(ins.address, line)
            if owner not in stats:
                stats[owner] = LineStats(owner, all_texts.get(owner, ""))
            stats[owner].barrier_wait += waited
            if owner != line:
                s.barrier_moved_out += waited
                stats[owner].barrier_moved_in += waited
        if ins.opcode:
            s.opcodes[ins.opcode] += v(INST)
    def_line = _def_line(texts, page.function)
    chains = []
    for producer, consumer in _dependent_global_loads(ordered):
        pair = (target(producer)[0], target(consumer)[0])
        if pair[0] != pair[1] and pair not in chains:
            chains.append(pair)
    return LineProfile(path=path, function=page.function, def_line=def_line, lines=stats, dependent_loads=chains)


def _dependent_global_loads(ordered: list[SassInstruction]) -> list[tuple[SassInstruction, SassInstruction]]:
    """Global loads (LDG, or LDGSTS where Triton pipelined the load) whose address registers carry
    a value an earlier global load produced (through
    any arithmetic in between), in program order: (the producing load, the dependent load). Straight
    -line taint over the SASS by address; a register written by an instruction that reads no tainted
    register is clean again."""
    taint: dict[int, SassInstruction] = {}
    out = []
    for ins in ordered:
        written, read = _registers(ins.sass)
        base = ins.opcode.split(".")[0]
        if written and base != "LDG" and ("WIDE" in ins.opcode or ".64" in ins.opcode):
            written = written | {max(written) + 1}   # IMAD.WIDE and friends write a register pair
        sources = [taint[r] for r in sorted(read) if r in taint]
        if base in ("LDG", "LDGSTS") and sources:   # LDGSTS: a load Triton pipelined (cp.async)
            out.append((sources[0], ins))
        for r in written:
            if base == "LDG":
                taint[r] = ins
            elif sources:
                taint[r] = sources[0]
            else:
                taint.pop(r, None)
    return out


_REG = re.compile(r"(?<![\w.])R(\d+)(?:\.64)?\b")
_LONG_SCOREBOARD_LOADS = ("LDG", "LDL", "LD", "ATOMG", "ATOM", "TLD", "TEX", "SULD", "SUATOM")
_NO_DEST = ("ST", "STG", "STL", "STS", "RED", "REDG", "BAR", "BRA", "EXIT", "RET", "CALL", "MEMBAR", "NOP",
            "BSYNC", "BSSY", "WARPSYNC", "DEPBAR", "ERRBAR", "CCTL", "LDGSTS")


def _width(opcode: str) -> int:
    parts = opcode.split(".")
    return 4 if "128" in parts else 2 if "64" in parts else 1


def _registers(sass: str) -> tuple[set[int], set[int]]:
    """(registers written, registers read) by one SASS instruction, from its text."""
    text = re.sub(r"^\s*@!?U?P\w+\s+", "", sass)
    opcode, _, operands = text.strip().partition(" ")
    base = opcode.split(".")[0]
    regs = [(int(m.group(1)), m.group(0).endswith(".64")) for m in _REG.finditer(operands)]
    width = _width(opcode)
    written: set[int] = set()
    if regs and base not in _NO_DEST:
        first, _ = regs[0]
        written = set(range(first, first + (width if base in _LONG_SCOREBOARD_LOADS else 1)))
        regs = regs[1:]
    read: set[int] = set()
    for i, (r, pair) in enumerate(regs):
        n = 2 if pair else (width if base in _NO_DEST and i == len(regs) - 1 else 1)
        read.update(range(r, r + n))
    return written, read


def _long_scoreboard_producers(ordered: list[SassInstruction]) -> dict[int, SassInstruction]:
    """For each instruction with long-scoreboard samples, the global/local load whose result it
    waited for: the nearest earlier load writing a register it reads (or, for a loop-carried
    value, the nearest later one), within 512 instructions."""
    out: dict[int, SassInstruction] = {}
    decoded = [_registers(i.sass) for i in ordered]
    for k, ins in enumerate(ordered):
        if not ins.value("stall_long_sb"):
            continue
        reads = decoded[k][1]
        if not reads:
            continue
        for j in list(range(k - 1, max(-1, k - 512), -1)) + list(range(k + 1, min(len(ordered), k + 512))):
            cand = ordered[j]
            if cand.opcode.split(".")[0] in _LONG_SCOREBOARD_LOADS and decoded[j][0] & reads:
                out[ins.address] = cand
                break
    return out


_HINTS = (
    (re.compile(r"\b_?(?:elementwise_)?(argmax|argmin)\b"), None),
    (re.compile(r"_elementwise_max\b|core\.maximum\b"), "max"),
    (re.compile(r"_elementwise_min\b|core\.minimum\b"), "min"),
    (re.compile(r"_sum_combine\b"), "sum"),
    (re.compile(r"_prod_combine\b"), "prod"),
    (re.compile(r"_xor_combine\b"), "xor_sum"),
)


def _library_hint(text: str) -> str | None:
    """The `tl.<name>` a line of Triton's library belongs to, when its text says so."""
    for pattern, name in _HINTS:
        m = pattern.search(text)
        if m:
            return name or m.group(1)
    return None


def _def_line(texts: dict[int, str], function: str) -> int | None:
    pattern = re.compile(rf"\b(def|void)\s+{re.escape(function)}\s*\(") if function else None
    for line in sorted(texts):
        if pattern and pattern.search(texts[line]):
            return line
    return min(texts) if texts else None
