from tests.lintutil import lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI040.py", "TRI040")
    marked = marked_lines("TRI040.py", "TRI040")
    assert [f.line for f in findings] == marked  # a key held in a module list: reported where the decorator names it
    first = findings[0]
    assert "`H`, `W`" in first.message and "`stride_h`, `stride_w`" in first.message


def test_the_template_conv2d_keys_on_output_and_stride():
    from pathlib import Path

    import tritonify.kernels.templates as templates

    text = (Path(templates.__file__).parent / "conv2d.py").read_text()
    assert lint(text, "TRI040") == []


def test_a_key_that_is_not_a_literal_list_is_not_guessed():
    code = '''
import triton
import triton.language as tl

def keys():
    return [name for name in ("H", "W")]

@triton.autotune(configs=[], key=KEYS)
@triton.jit
def k(x_ptr, H, W, stride_h, pad_h, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
'''
    assert lint(code, "TRI040") == []
