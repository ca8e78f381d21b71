"""Cells and units of ncu's CSV pages."""
import pytest

from tritonify.diagnostics.ncu.raw_page import parse_raw
from tritonify.diagnostics.ncu.values import parse_number, to_base, unit_factor

from .helpers import text


@pytest.mark.parametrize("cell,value", [
    ("16,384", 16384.0), ("2048.000000", 2048.0), ("0.39", 0.39), ("-3", -3.0), ("1e3", 1000.0),
    ("929,176 (18; 4,680; 12)", 929176.0), ("1,234,567.5", 1234567.5),
])
def test_numbers(cell, value):
    assert parse_number(cell) == pytest.approx(value)


@pytest.mark.parametrize("cell", ["", "n/a", "no data", "PolicySpread", "-", None, "(256, 1, 1)"])
def test_non_numbers(cell):
    assert parse_number(cell) is None


@pytest.mark.parametrize("unit,factor,base", [
    ("msecond", 1e6, "ns"), ("us", 1e3, "ns"), ("ns", 1.0, "ns"), ("Gbyte", 1e9, "byte"),
    ("Kbyte/block", 1e3, "byte/block"), ("sector/ns", 1e9, "sector/s"), ("Tbyte/s", 1e12, "byte/s"),
    ("Ghz", 1e9, "hz"), ("%", 1.0, "%"), ("", 1.0, ""), ("Mibyte", 1024.0**2, "byte"),
])
def test_unit_factors(unit, factor, base):
    assert unit_factor(unit) == (pytest.approx(factor), base)


def test_to_base_keeps_none():
    assert to_base(None, "ms") is None
    assert to_base(2.5, "ms") == 2.5e6


def test_scaled_and_base_exports_agree():
    """The same report exported with and without --print-units base gives the same numbers
    (within the rounding of the scaled display) once units are converted."""
    base, scaled = parse_raw(text("raw_base.csv")), parse_raw(text("raw.csv"))
    assert [l.kernel for l in base] == [l.kernel for l in scaled]
    checked = 0
    for b, s in zip(base, scaled):
        for name in ("gpu__time_duration.sum", "launch__shared_mem_per_block",
                     "sm__throughput.avg.pct_of_peak_sustained_elapsed", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"):
            x, y = b.metrics.get(name), s.metrics.get(name)
            if x is None or y is None:
                continue
            assert y == pytest.approx(x, rel=0.02, abs=0.01 * max(1.0, abs(x)) if x < 100 else 0), (b.kernel, name, x, y)
            checked += 1
    assert checked > 100
    # durations are ns in both after conversion (base prints ns, the scaled export us/ms)
    assert base[0].metrics["gpu__time_duration.sum"] == pytest.approx(scaled[0].metrics["gpu__time_duration.sum"], rel=0.01)
