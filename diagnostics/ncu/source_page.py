"""The source page (`ncu --csv --page source --print-source cuda,sass -k regex:NAME`).

For a Triton kernel the page names the Python file; for CUDA built with -lineinfo, the `.cu`.
Layout seen with ncu 2025.3.1: one block per source file, each opened by `"File Path",PATH`,
`"Function Name",NAME` and its own header row (`Line No, Source, Address, Source, <metrics>`;
the optional columns `Divergent Branches`, `L1 Wavefronts Shared Excessive`, `L2 Theoretical
Sectors Local` appear only where they apply). A source-line row (line number, text, `-`, `-`,
per-line totals) is followed by the SASS instructions compiled from it (empty line number,
address, SASS text, per-instruction values); `...` rows separate address gaps. An instruction
can be listed under several lines of an included header; it is kept once per file.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

from tritonify.diagnostics.ncu.raw_page import PageError
from tritonify.diagnostics.ncu.values import parse_number

_OPCODE = re.compile(r"^\s*(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")


@dataclass
class SassInstruction:
    address: int
    sass: str
    path: str
    line: int
    values: dict[str, float] = field(default_factory=dict)
    address_space: str = ""
    access: str = ""
    access_size: str = ""

    @property
    def opcode(self) -> str:
        """`LDG.E.128` for `@P0 LDG.E.128 R4, desc[...]` (the predicate guard dropped)."""
        m = _OPCODE.match(self.sass)
        return m.group(1) if m else ""

    def value(self, column: str) -> float:
        return self.values.get(column) or 0.0


@dataclass
class SourceLine:
    path: str
    line: int
    text: str
    values: dict[str, float] = field(default_factory=dict)


@dataclass
class SourcePage:
    function: str
    lines: list[SourceLine] = field(default_factory=list)
    instructions: list[SassInstruction] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        seen: list[str] = []
        for ln in self.lines:
            if ln.path not in seen:
                seen.append(ln.path)
        return seen

    def kernel_file(self) -> str | None:
        """The file that defines the kernel (its `def NAME(` or `void NAME(` line), else the
        first file that is not Triton's own library or a CUDA header."""
        pattern = re.compile(rf"\b(def|void)\s+{re.escape(self.function)}\s*\(") if self.function else None
        if pattern:
            for ln in self.lines:
                if pattern.search(ln.text):
                    return ln.path
        for path in self.files:
            if not is_library_path(path):
                return path
        return self.files[0] if self.files else None


def is_library_path(path: str) -> bool:
    """Triton's inlined library (`triton/language/*.py`) and CUDA's own headers."""
    p = path.replace("\\", "/")
    return ("/triton/language/" in p or "/site-packages/" in p or "/cuda/" in p and "/include/" in p
            or p.endswith(".hpp") and "/targets/" in p)


def _address(cell: str) -> int | None:
    cell = cell.strip()
    if cell.startswith("0x"):
        try:
            return int(cell, 16)
        except ValueError:
            return None
    return None


def parse_source(text: str) -> SourcePage:
    from tritonify.diagnostics.ncu.raw_page import PageError, csv_rows

    rows = csv_rows(text, "source")
    if rows and not text.rstrip(" ").endswith("\n") and len(rows) > 3 and len(rows[-1]) < len(rows[-2]):
        # the last line stops mid-row (no final newline, fewer cells than the row before)
        raise PageError("the source page ends in the middle of a row: the file is truncated")
    page = SourcePage(function="")
    path, header, current_line, col = None, None, None, {}
    seen: set[tuple[str, int]] = set()
    for row in rows:
        if not row:
            continue
        if row[0] == "File Path" and len(row) >= 2:
            path, header, current_line = row[1], None, None
            continue
        if row[0] == "Function Name" and len(row) >= 2:
            page.function = page.function or row[1]
            continue
        if row[0] == "Line No":
            header = row
            col = {name: i for i, name in enumerate(header)}
            continue
        if header is None or path is None or len(row) < 4:
            continue
        metrics = {}
        for i in range(4, min(len(row), len(header))):
            c = row[i]
            if c == "0" or c == "-" or not c:
                continue  # zeros are the default of SassInstruction.value
            v = parse_number(c)
            if v is not None:
                metrics[header[i]] = v
        if row[0].strip():
            try:
                number = int(row[0])
            except ValueError:
                continue
            current_line = SourceLine(path, number, row[1], metrics)
            page.lines.append(current_line)
            continue
        addr = _address(row[2])
        if addr is None or current_line is None:
            continue  # "..." gap rows
        if (path, addr) in seen:
            continue
        seen.add((path, addr))
        def cell(name):
            i = col.get(name)
            return row[i].strip() if i is not None and i < len(row) and row[i].strip() != "-" else ""

        page.instructions.append(SassInstruction(
            address=addr, sass=row[3].strip(), path=path, line=current_line.line, values=metrics,
            address_space=cell("Address Space"), access=cell("Access Operation"),
            access_size=cell("Access Size")))
    if not page.lines:
        raise PageError("not an ncu source page: expected \"File Path\" and \"Line No\" rows (export with "
                        "`ncu --import R.ncu-rep --csv --page source --print-source cuda,sass -k regex:NAME`; "
                        "the report needs `--import-source yes`)")
    return page
