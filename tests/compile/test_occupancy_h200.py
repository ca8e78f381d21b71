"""The occupancy calculator against Nsight Compute on the H200: for every launch of the committed
capture (Triton and CUDA kernels), the theoretical occupancy and the register limit computed from
ncu's own registers, shared memory and block size equal ncu's figures."""
import csv
import gzip
from pathlib import Path

import pytest
from tritonify.diagnostics.compile.occupancy import theoretical_occupancy
from tritonify.diagnostics.compile.targets import ARCHS

RAW = Path(__file__).resolve().parents[1] / "ncu" / "fixtures" / "h200" / "raw.csv.gz"


def _launches():
    if not RAW.is_file():
        return []
    with gzip.open(RAW, "rt") as f:
        rows = list(csv.reader(f))
    header = rows[0]

    def get(row, col):
        return float(row[header.index(col)].replace(",", ""))

    out = []
    for row in rows[2:]:
        out.append(pytest.param(
            int(get(row, "launch__registers_per_thread")),
            round((get(row, "launch__shared_mem_per_block_dynamic") + get(row, "launch__shared_mem_per_block_static")) * 1000),
            int(get(row, "launch__block_size")),
            get(row, "sm__maximum_warps_per_active_cycle_pct"),
            int(get(row, "launch__occupancy_limit_registers")),
            id=row[header.index("Kernel Name")]))
    return out


LAUNCHES = _launches()


def test_capture_is_there():
    assert len(LAUNCHES) >= 20


@pytest.mark.parametrize("regs,smem,block,ncu_pct,ncu_reg_limit", LAUNCHES)
def test_matches_ncu(regs, smem, block, ncu_pct, ncu_reg_limit):
    occ = theoretical_occupancy(ARCHS[90], regs, smem, block // 32)
    assert occ.percent == pytest.approx(ncu_pct, abs=0.01)
    assert occ.limits["registers"] == ncu_reg_limit
