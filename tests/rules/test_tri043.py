from tests.lintutil import lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI043.py", "TRI043")
    assert [f.line for f in findings] == marked_lines("TRI043.py", "TRI043")
    assert "permute(0, 2, 3, 1)" in findings[0].message and "`(... * W + ...) * C`" in findings[0].message


def test_the_templates_and_the_nchw_example_are_quiet():
    from pathlib import Path

    from tests.lintutil import lint

    root = Path(__file__).resolve().parents[2]
    for path in ("kernels/templates/conv2d.py", "examples/triton/conv_nchw_backward.py"):
        assert lint((root / path).read_text(), "TRI043") == [], path
