"""Cells and units of ncu's CSV pages, turned into plain floats.

ncu 2025.3 writes numbers with thousands separators (`16,384`), fixed decimals (`2048.000000`),
instanced metrics as `aggregate (i1; i2; ...)`, and strings (`no data`, `n/a`, `PolicySpread`).
Without `--print-units base` it also scales columns (`msecond`, `Gbyte`, `sector/ns`); `to_base`
converts those to the units `--print-units base` prints (durations in ns, rates per second), so
detectors see the same numbers whichever export the user has.
"""
from __future__ import annotations

import re

_NUMBER = re.compile(r"^[-+]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?([eE][-+]?\d+)?$")

# Prefix factors for counted quantities (byte, sector, hz, inst, ...).
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_KIBI = {"Ki": 1024.0, "Mi": 1024.0**2, "Gi": 1024.0**3, "Ti": 1024.0**4}
# A duration in the numerator, in ns (what --print-units base prints for gpu__time_duration).
_TIME_NS = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6,
            "s": 1e9, "second": 1e9}
# A duration in the denominator of a rate, relative to one second.
_TIME_S = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3,
           "s": 1.0, "second": 1.0}
_BASE_WORDS = ("byte", "sector", "hz", "inst", "cycle", "warp", "thread", "block", "request",
               "wavefront", "register", "bit", "flop", "pass")


def parse_number(cell: str | None) -> float | None:
    """The number in a cell, or None for text, `n/a`, `no data` and empty cells."""
    if cell is None:
        return None
    try:
        return float(cell)  # the common case: "0", "32", "2048.000000"
    except ValueError:
        pass
    text = cell.strip()
    if not text or text in ("-", "n/a", "no data"):
        return None
    if " (" in text and text.endswith(")"):  # instanced: "929,176 (18; 4,680; ...)"
        text = text.split(" (", 1)[0].strip()
    if _NUMBER.match(text):
        return float(text.replace(",", ""))
    return None


def _split_prefix(word: str) -> tuple[float, str]:
    for pre, factor in _KIBI.items():
        if word.startswith(pre) and word[len(pre):].lower() in _BASE_WORDS:
            return factor, word[len(pre):]
    if word and word[0] in _PREFIX and word[0] != "" and word[1:].lower() in _BASE_WORDS:
        return _PREFIX[word[0]], word[1:]
    return 1.0, word


def unit_factor(unit: str | None) -> tuple[float, str]:
    """(factor, base unit) so that value * factor is in the base unit."""
    if not unit:
        return 1.0, ""
    unit = unit.strip()
    num, _, den = unit.partition("/")
    if num in _TIME_NS:
        nf, nb = _TIME_NS[num], "ns"
    else:
        nf, nb = _split_prefix(num)
    if not den:
        return nf, nb
    if den in _TIME_S:
        return nf / _TIME_S[den], f"{nb}/s"
    df, db = _split_prefix(den)
    return nf / df, f"{nb}/{db}"


def to_base(value: float | None, unit: str | None) -> float | None:
    if value is None:
        return None
    factor, _ = unit_factor(unit)
    return value * factor
