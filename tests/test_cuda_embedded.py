"""CUDA embedded in Python: discovery under aliases, and exact host line/column mapping."""
import ast
import textwrap

import pytest

from tritonify.diagnostics.cuda import embedded
from tritonify.diagnostics.cuda.positions import map_string_literal, physical_lines
from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.registry import all_rules
from tritonify.diagnostics.settings import Settings
from tritonify.diagnostics.source import SourceFile


def findings(code: str, select: str = "CUD"):
    result = lint_text(textwrap.dedent(code), "host.py", Settings(select=(select,)))
    return result.findings


def where(code: str, needle: str, occurrence: int = 0) -> tuple[int, int]:
    """(1-based line, 0-based code-point column) of `needle` in the dedented code."""
    lines = textwrap.dedent(code).splitlines()
    hits = [(i, line.index(needle)) for i, line in enumerate(lines, 1) if needle in line]
    return hits[occurrence]


def positions(code: str) -> list[tuple[int, int, int]]:
    return [(f.line, f.column, f.end_column) for f in findings(code, "CUD001")]


def test_triple_quoted_content_on_the_next_line():
    code = '''
    from torch.utils.cpp_extension import load_inline
    SRC = """
    __global__ void k(float* y) {
      y[0] = y[0] * 0.1;
    }
    """
    m = load_inline("m", cpp_sources="", cuda_sources=SRC)
    '''
    line, col = where(code, "0.1")
    assert positions(code) == [(line, col, col + 3)]


def test_triple_quoted_content_on_the_quote_line():
    code = '''
    import cupy as cp
    k = cp.RawKernel("""extern "C" __global__ void k(float* y) { y[0] = y[0] * 0.1; }
    """, "k")
    '''
    line, col = where(code, "0.1")
    assert positions(code) == [(line, col, col + 3)]


def test_escapes_and_non_ascii_shift_columns_in_code_points():
    code = '''
    from cupy import RawModule as RM
    m = RM(code="/* é \\t */ __global__ void k(float* y) {\\n  y[0] = y[0] * 0.1; }")
    '''
    line, col = where(code, "0.1")
    assert positions(code) == [(line, col, col + 3)]


def test_raw_string_keeps_backslashes():
    code = '''
    import torch.utils.cpp_extension as ext
    ext.load_inline("m", "", cuda_sources=[r"""__global__ void k(float* y) { /* \\n */ y[0] = y[0] * 0.1; }"""])
    '''
    line, col = where(code, "0.1")
    assert positions(code) == [(line, col, col + 3)]


def test_implicit_concatenation_maps_each_piece():
    code = '''
    import cupy
    k = cupy.RawKernel(
        "__global__ void k(float* y) {\\n"
        "  y[0] = y[0] * 0.1;\\n"
        "  y[1] = y[1] * 1e-3;\\n"
        "}\\n", "k")
    '''
    (l1, c1), (l2, c2) = where(code, "0.1"), where(code, "1e-3")
    assert positions(code) == [(l1, c1, c1 + 3), (l2, c2, c2 + 4)]


def test_textwrap_dedent_and_module_variable_and_list():
    code = '''
    import textwrap
    from torch.utils import cpp_extension
    A = textwrap.dedent("""
        __global__ void a(float* y) { y[0] = y[0] * 0.1; }
    """)
    B = "__global__ void b(float* y) { y[0] = y[0] * 0.2; }"
    cpp_extension.load_inline("m", "", cuda_sources=[A, B])
    '''
    (l1, c1), (l2, c2) = where(code, "0.1"), where(code, "0.2")
    assert positions(code) == [(l1, c1, c1 + 3), (l2, c2, c2 + 3)]


def test_crlf_host_file():
    code = 'import cupy\r\nk = cupy.RawKernel("""\r\n__global__ void k(float* y) {\r\n  y[0] = y[0] * 0.1;\r\n}""", "k")\r\n'
    result = lint_text(code, "host.py", Settings(select=("CUD001",)))
    assert [(f.line, f.column) for f in result.findings] == [(4, 16)]


def test_fix_edits_the_python_file_in_place():
    code = '''
    import cupy
    k = cupy.RawKernel("__global__ void k(float* y) { y[0] = y[0] * 0.1 + 1.0; }", "k")
    '''
    from tests.lintutil import apply_fixes

    src = textwrap.dedent(code)
    out, applied = apply_fixes(src, findings(code, "CUD001"))
    assert applied == 2
    assert 'y[0] = y[0] * 0.1f + 1.0f; }", "k")' in out
    ast.parse(out)


@pytest.mark.parametrize("code", [
    # f-strings: the text exists only at run time
    'import cupy\nk = cupy.RawKernel(f"__global__ void k(float* y) {{ y[0] = y[0] * {0.1}; }}", "k")\n',
    # bytes are not accepted as CUDA source here
    'import cupy\nk = cupy.RawKernel(b"__global__ void k(float* y) { y[0] = y[0] * 0.1; }", "k")\n',
    # cpp_sources is host C++, not device code
    'from torch.utils.cpp_extension import load_inline\nm = load_inline("m", cpp_sources="float h(float x) { return x * 0.1; }")\n',
    # not the compiler: a look-alike name from another module
    'from mylib import RawKernel\nk = RawKernel("__global__ void k(float* y) { y[0] = y[0] * 0.1; }", "k")\n',
    # a string that reaches no compiler
    'SRC = "__global__ void k(float* y) { y[0] = y[0] * 0.1; }"\n',
])
def test_quiet_cases(code):
    assert findings(code) == []


def test_might_embed_cuda_is_a_cheap_filter():
    assert embedded.might_embed_cuda(SourceFile.from_text("import cupy\ncupy.RawKernel('', 'k')\n"))
    assert not embedded.might_embed_cuda(SourceFile.from_text("import triton\n"))


def test_check_cuda_text_directly():
    rules = [r for r in all_rules() if r.rule.language == "cuda"]
    text = "__global__ void k(float* y) { y[0] = exp(y[0] * 0.5); }\n"
    codes = sorted(f.code for f in embedded.check_cuda_text(text, "k.cu", rules))
    assert codes == ["CUD001", "CUD002"]
    assert list(embedded.check_cuda_text(text, "k.cu", [])) == []


def test_garbage_input_gives_no_traceback():
    result = lint_text("\x00\xff__global__ {{{{ ((( 0.1 *", "bad.cu", Settings())
    assert result.error is None
    result = lint_text(b"\xff\xfe__global__ void k(float* y) { y[0] *= 0.1; }", "bad.cu", Settings())
    assert result.error is None and [f.code for f in result.findings] == ["CUD001"]


def test_string_map_round_trips_every_character():
    code = 'X = ("a\\tb"\n     r"\\q" """\nc\\\nd""")\n'
    tree = ast.parse(code)
    const = tree.body[0].value
    mapping = map_string_literal(physical_lines(code), const)
    assert mapping is not None and mapping.value == const.value == "a\tb\\q\ncd"
    assert mapping.starts[0] == (1, 6)      # after `X = ("`
    assert mapping.starts[2] == (1, 9)      # `b` after the two-character `\t`
    assert mapping.starts[3] == (2, 7)      # the raw backslash
    assert mapping.starts[-1] == (4, 0)     # `d` after a line continuation


EXAMPLES = __import__("pathlib").Path(__file__).resolve().parent.parent / "examples" / "cuda"


@pytest.mark.parametrize("name, codes", [
    ("layernorm_fwd.cu", {"CUD001", "CUD002"}),
    ("softmax_clean.cu", set()),
    ("gelu_load_inline.py", {"CUD001"}),
    ("rmsnorm_cupy.py", {"CUD001", "CUD002"}),
])
def test_examples_fire_where_they_say(name, codes):
    path = EXAMPLES / name
    result = lint_text(path.read_text(), str(path), Settings(select=("CUD",)))
    assert {f.code for f in result.findings} == codes


@pytest.mark.parametrize("header, call", [
    ("import torch", "torch.utils.cpp_extension.load_inline('m', '', cuda_sources=SRC)"),
    ("from torch.utils.cpp_extension import load_inline as li", "li('m', '', SRC)"),
    ("from torch.utils import cpp_extension as ce", "ce.load_inline(name='m', cpp_sources='', cuda_sources=(SRC,))"),
    ("import cupy as cp", "cp.RawModule(code=SRC)"),
    ("import cupy", "cupy.RawKernel(code=SRC, name='k')"),
])
def test_every_import_spelling_is_found(header, call):
    code = f'{header}\nSRC = "__global__ void k(float* y) {{ y[0] = y[0] * 0.1; }}"\nx = {call}\n'
    (f,) = findings(code, "CUD001")
    assert (f.line, f.column) == (2, code.splitlines()[1].index("0.1"))
