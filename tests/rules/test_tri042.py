from tests.lintutil import lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI042.py", "TRI042")
    assert [f.line for f in findings] == marked_lines("TRI042.py", "TRI042")
    assert all("subproblems" in f.message for f in findings)


def test_one_finding_per_buffer_and_none_without_a_stride_name():
    code = """
import torch

def dgrad(kernel, g, w, stride):
    buf = torch.zeros(g.shape[0] * stride)
    buf[::stride] = g
    buf[::stride] = 2 * g
    kernel[(1,)](buf, w)

def spaced(kernel, g, w, step):
    buf = torch.zeros(g.shape[0] * step)
    buf[::step] = g
    kernel[(1,)](buf, w)
"""
    findings = lint(code, "TRI042")
    assert [f.line for f in findings] == [6]


def test_files_without_zeros_or_strides_are_not_parsed_for_it():
    from tritonify.diagnostics.rules.triton import tri042_dgrad_zero_insertion as rule

    assert not rule.may_fire("x = torch.empty(3)\n")
    assert rule.may_fire("buf = torch.zeros(n)\nbuf[::stride] = g\nkernel[grid](buf)\n")
    assert rule.may_fire("buf = torch.zeros(n)\nbuf[::stride] = g\n(kernel[grid])  # c\n(buf)\n")
    # nothing launched (no `x[...](`): it cannot fire, so the file is not parsed for it
    assert not rule.may_fire("buf = torch.zeros(n)\nbuf[::stride] = g\n")
