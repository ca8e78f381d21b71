from tests.lintutil import lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI041.py", "TRI041")
    assert [f.line for f in findings] == marked_lines("TRI041.py", "TRI041")
    first = findings[0]
    assert "648 bytes" in first.message and "multiple of 8 elements" in first.message


def test_the_first_misaligned_dimension_is_named_once():
    code = """
import torch
from triton.tools.tensor_descriptor import TensorDescriptor as TD

def f():
    t = torch.empty(4, 5, 3, dtype=torch.int8)
    return TD.from_tensor(t, [1, 1, 16])
"""
    (f,) = lint(code, "TRI041")
    assert "dimension 0's stride is 15 elements = 15 bytes" in f.message


def test_files_without_descriptors_are_not_parsed_for_it():
    from tritonify.diagnostics.rules.triton import tri041_descriptor_stride_alignment as rule

    assert not rule.may_fire("x = torch.empty(3, 5)\n") and rule.may_fire("TensorDescriptor.from_tensor(x, b)")


def test_a_scaled_factory_keeps_its_shape_and_a_broadcast_is_not_guessed():
    code = """
import torch
from triton.tools.tensor_descriptor import TensorDescriptor

C = 36

def scaled():
    w = torch.randn(64, C, dtype=torch.bfloat16) / (9 * C) ** 0.5
    return TensorDescriptor.from_tensor(w, [64, 32])

def broadcast(scale):
    w = torch.randn(64, 1, dtype=torch.bfloat16) * scale
    return TensorDescriptor.from_tensor(w, [64, 32])
"""
    assert [f.line for f in lint(code, "TRI041")] == [9]
