"""Correctness first: float64 reference, fresh inputs, poisoned outputs (Triton kernels in the interpreter)."""
from __future__ import annotations

import pytest
import torch
from tritonify.kernels.bench.contract import Contract, ContractError
from tritonify.kernels.bench.correctness import (
    call_poisoned,
    check,
    compare,
    poisoned_allocations,
)
from tritonify.kernels.bench.discovery import load_contracts

from tests.bench.conftest import write_case


def _contract(tmp_path, variant):
    return load_contracts(write_case(tmp_path / variant, variant, module=f"affine_{variant}"))[0]


def test_correct_kernel_passes(tmp_path, interpret):
    c = _contract(tmp_path, "good")
    result = check(c.entry, c, (4, 16), "cpu", seed=1)
    assert result.correct, result.message
    assert result.unwritten == 0 and result.mismatched == 0
    assert result.max_abs_err < 1e-5


def test_unwritten_elements_are_caught_by_poisoning(tmp_path, interpret):
    c = _contract(tmp_path, "skip_last")
    result = check(c.entry, c, (4, 16), "cpu", seed=2)
    assert not result.correct
    assert result.unwritten == 4               # the last column of each of 4 rows
    assert "never written" in result.message


def test_wrong_values_are_reported_with_counts(tmp_path, interpret):
    c = _contract(tmp_path, "wrong")
    result = check(c.entry, c, (4, 16), "cpu", seed=3)
    assert not result.correct and result.unwritten == 0
    assert result.mismatched > 0 and "differ from the reference" in result.message


def test_poisoned_allocations_fill_empty_tensors_and_restore_state():
    before = torch.are_deterministic_algorithms_enabled()
    with poisoned_allocations():
        assert torch.isnan(torch.empty(8)).all()
        assert (torch.empty(3, dtype=torch.int32) == torch.iinfo(torch.int32).max).all()
    assert torch.are_deterministic_algorithms_enabled() == before


def test_out_buffer_is_poisoned_before_the_call():
    seen = {}

    def writes_half(x, out):
        seen["nan_before"] = bool(torch.isnan(out).all())
        out[: x.numel() // 2] = x[: x.numel() // 2]

    x = torch.randn(8)
    out = call_poisoned(writes_half, (x,), out_factory=lambda x: torch.zeros_like(x))
    assert seen["nan_before"]
    ref = compare(out, x.double(), 1e-6, 1e-6)
    assert ref.unwritten == 4 and not ref.correct


def test_out_contract_path(tmp_path):
    def add_into(x, y, out):
        torch.add(x, y, out=out)

    c = Contract(entry=add_into, inputs=lambda s, d, dev: (torch.randn(s, dtype=d), torch.randn(s, dtype=d)),
                 reference=torch.add, dtype="float32", out=lambda x, y: torch.empty_like(x))
    assert check(c.entry, c, (5, 7), "cpu", seed=4, use_out=True).correct


def test_zero_inputs_are_refused():
    c = Contract(entry=torch.neg, inputs=lambda s, d, dev: (torch.zeros(s, dtype=d),), reference=torch.neg,
                 dtype="float32")
    with pytest.raises(ContractError, match="never zeros"):
        check(c.entry, c, (4, 4), "cpu", seed=5)


def test_fresh_inputs_per_seed():
    seen = []

    def spy(x):
        seen.append(x.clone())
        return x * 1

    c = Contract(entry=spy, inputs=lambda s, d, dev: (torch.randn(s, dtype=d),), reference=lambda x: x, dtype="float32")
    check(c.entry, c, (16,), "cpu", seed=10)
    check(c.entry, c, (16,), "cpu", seed=11)
    assert not torch.equal(seen[0], seen[1])


def test_compare_shapes_tuples_and_nans():
    a = torch.ones(3)
    assert not compare(a, torch.ones(4, dtype=torch.float64), 0, 0).correct
    assert "2 tensor(s)" in compare((a, a), a.double(), 0, 0).message
    both_nan = torch.tensor([float("nan"), 1.0])
    assert compare(both_nan, both_nan.double(), 0, 0).correct          # NaN where the reference is NaN
    assert not compare(torch.tensor([float("nan"), 1.0]), torch.tensor([0.0, 1.0], dtype=torch.float64), 1, 1).correct
