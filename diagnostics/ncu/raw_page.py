"""The raw page (`ncu --csv --page raw`): one row per profiled launch, one column per metric.

Layout seen with ncu 2025.3.1: row 1 names the columns (launch identity first, then metrics),
row 2 holds the units, then one row per launch. The identity columns vary (two NVTX columns
appear with `--nvtx`), so they are found by name, never by position.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from tritonify.diagnostics.ncu.values import parse_number, to_base

IDENTITY = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
            "Block Size", "Grid Size", "Device", "CC")


class PageError(ValueError):
    """The text is not the page it should be; the message says what was expected."""


def csv_rows(text: str, page: str) -> list[list[str]]:
    """The CSV rows of a page. The csv module's cell limit (131,072 characters) stays in place, so
    a damaged file (an unterminated quote swallowing the rest) fails fast with a clear message
    instead of growing without bound."""
    try:
        return [r for r in csv.reader(io.StringIO(text.lstrip("\ufeff"))) if r]
    except csv.Error as exc:
        raise PageError(f"the {page} page is not valid CSV ({exc}): an unterminated quote or a damaged "
                        "export; export it again with `ncu --import R.ncu-rep --csv ...`") from None


@dataclass
class Launch:
    """One profiled launch: identity plus metrics in base units (see `values.to_base`)."""

    id: str
    kernel: str
    block: tuple[int, ...] = ()
    grid: tuple[int, ...] = ()
    cc: str = ""
    nvtx: str = ""
    metrics: dict[str, float] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)   # non-numeric cells ("no data", names)

    def get(self, *names: str, default: float | None = None) -> float | None:
        """The first of `names` that has a value (callers list sm_90 names, then equivalents)."""
        for name in names:
            value = self.metrics.get(name)
            if value is not None:
                return value
        return default

    def has(self, name: str) -> bool:
        return name in self.metrics

    @property
    def threads_per_block(self) -> int:
        n = 1
        for d in self.block or (0,):
            n *= d
        return n

    @property
    def blocks(self) -> int:
        n = 1
        for d in self.grid or (0,):
            n *= d
        return n


def _dims(cell: str) -> tuple[int, ...]:
    parts = [p.strip() for p in cell.strip().strip("()").split(",") if p.strip()]
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        return ()


def parse_raw(text: str) -> list[Launch]:
    """Parse the raw page. Raises PageError when the header or units row is missing."""
    rows = csv_rows(text, "raw")
    # ncu may print ==PROF==/==WARNING== lines before the table when stdout was captured.
    while rows and not (rows[0] and rows[0][0] == "ID"):
        rows.pop(0)
    if len(rows) < 2 or "Kernel Name" not in rows[0]:
        raise PageError("not an ncu raw page: expected a header row starting with \"ID\" and a "
                        "\"Kernel Name\" column (export with `ncu --import R.ncu-rep --csv --page raw`)")
    header, units = rows[0], rows[1]
    if "Rule Name" in header or "Metric Value" in header:
        raise PageError("this is ncu's details page, not the raw page (export with `--page raw`)")
    col = {name: i for i, name in enumerate(header)}
    nvtx_cols = [i for i, name in enumerate(header) if "Push/Pop_Range" in name or "Start/Stop_Range" in name]
    launches = []
    for number, row in enumerate(rows[2:], 3):
        if len(row) != len(header):
            # never numbers from half a row: a truncated file or an unterminated quote
            raise PageError(f"row {number} of the raw page has {len(row)} cells where the header has "
                            f"{len(header)}: the file is truncated or damaged")
        launch = Launch(
            id=row[col["ID"]],
            kernel=row[col["Kernel Name"]],
            block=_dims(row[col["Block Size"]]) if "Block Size" in col else (),
            grid=_dims(row[col["Grid Size"]]) if "Grid Size" in col else (),
            cc=row[col["CC"]] if "CC" in col else "",
            nvtx=" ".join(row[i].strip() for i in nvtx_cols if row[i].strip()),
        )
        for i, name in enumerate(header):
            if name in IDENTITY or i in nvtx_cols:
                continue
            value = parse_number(row[i])
            if value is None:
                if row[i].strip():
                    launch.text[name] = row[i].strip()
                continue
            launch.metrics[name] = to_base(value, units[i] if i < len(units) else "")
        launches.append(launch)
    return launches
