import ast

from tritonify.diagnostics.model import Applicability, Severity
from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI001.py", "TRI001")
    assert [f.line for f in findings] == marked_lines("TRI001.py", "TRI001")


def test_only_hot_tanh_is_reported_and_as_a_warning():
    findings = {f.line: f for f in lint_fixture("TRI001.py", "TRI001")}
    chained, softcap = marked_lines("TRI001.py", "TRI001")
    assert findings[chained].severity is Severity.WARNING    # a loop on registers
    assert "inside a loop" in findings[chained].message
    assert findings[softcap].severity is Severity.WARNING    # on tl.dot results
    assert "tl.dot results" in findings[softcap].message


SNIPPET = """
import triton
import triton.language as tl
from triton.language.extra.libdevice import tanh

@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    for i in range(4):
        x = tanh(x * 0.5 + 1)
    tl.store(x_ptr + offs, x)
"""


def test_sigmoid_fix_is_safe_and_exact_text():
    (f,) = lint(SNIPPET, "TRI001")
    assert f.fixes[0].applicability is Applicability.SAFE
    out = fixed(SNIPPET, f, 0)
    assert "x = 2 * tl.sigmoid(2 * (x * 0.5 + 1)) - 1" in out
    ast.parse(out)
    assert lint(out, "TRI001") == []


def test_asm_fix_is_unsafe_and_parses():
    (f,) = lint(SNIPPET, "TRI001")
    assert f.fixes[1].applicability is Applicability.UNSAFE
    out = fixed(SNIPPET, f, 1)
    assert 'tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;"' in out
    ast.parse(out)
    assert lint(out, "TRI001") == []


def test_aliases_and_import_paths():
    code = """
    import triton as tr
    import triton.language as language
    from triton.language.extra.cuda import libdevice as ld

    @tr.jit
    def k(p, BLOCK: language.constexpr):
        a = language.arange(0, BLOCK).to(language.float32)
        for _ in range(3):
            a = ld.tanh(a)
            b = language.math.tanh(a)
            c = language.extra.cuda.libdevice.tanh(b)
        language.store(p + language.arange(0, BLOCK), c)
    """
    assert len(lint(code, "TRI001")) == 3


def test_call_form_kernel_and_no_triton():
    code = """
    import triton
    from triton.language.extra import libdevice

    def k(p):
        x = p + triton.language.arange(0, 64)
        for _ in range(2):
            x = libdevice.tanh(x)
        return x

    k = triton.jit(k)
    """
    assert len(lint(code, "TRI001")) == 1
    plain = """
    import math
    def f(x):
        return math.tanh(x)
    """
    assert lint(plain, "TRI001") == []


def test_noqa_suppresses():
    code = SNIPPET.replace("x = tanh(x * 0.5 + 1)", "x = tanh(x * 0.5 + 1)  # noqa: TRI001")
    assert lint(code, "TRI001") == []


def test_sigmoid_fix_keeps_operator_precedence():
    code = """
    import triton
    import triton.language as tl
    from triton.language.extra import libdevice

    @triton.jit
    def k(a_ptr, b_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        a = tl.load(a_ptr + offs)
        b = tl.load(b_ptr + offs)
        for _ in range(2):
            y = libdevice.tanh(a) * b - libdevice.tanh(b).to(tl.float32)
        tl.store(a_ptr + offs, y)
    """
    findings = lint(code, "TRI001")
    assert len(findings) == 2
    out = fixed(code, findings[0], 0)
    out = fixed(out, lint(out, "TRI001")[0], 0)
    assert "y = (2 * tl.sigmoid(2 * a) - 1) * b - (2 * tl.sigmoid(2 * b) - 1).to(tl.float32)" in out
    # same value as before the fix, evaluated with numbers standing in for tensors
    import math
    sig = lambda v: 1 / (1 + math.exp(-v))
    a, b = 0.7, -1.3
    before = math.tanh(a) * b - math.tanh(b)
    after = (2 * sig(2 * a) - 1) * b - (2 * sig(2 * b) - 1)
    assert abs(before - after) < 1e-12


def test_memory_bound_and_per_row_tanh_are_quiet():
    code = """
    import triton
    import triton.language as tl
    from triton.language.extra import libdevice

    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        for start in range(0, n, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * n + offs, mask=offs < n)
            tl.store(x_ptr + row * n + offs, libdevice.tanh(x), mask=offs < n)
        s = tl.load(x_ptr + row)
        for _ in range(8):
            s = libdevice.tanh(s)
        tl.store(x_ptr + row, s + libdevice.tanh(tl.sum(x, 0)))
    """
    # one tanh per loaded element in a streaming loop runs at memory speed (labelled noise on
    # every such finding of the real-world study); a tanh on one value per row costs nothing
    assert lint(code, "TRI001") == []


def test_other_targets_are_quiet():
    code = SNIPPET
    assert len(lint(code, "TRI001", path="ops/activation.py")) == 1
    assert lint(code, "TRI001", path="liger_kernel/ops/backends/_ascend/ops/act.py") == []
    guarded = code.replace("    for i in range(4):", "    if IS_HIP:\n        x = x\n    for i in range(4):")
    assert len(lint(guarded, "TRI001")) == 1
    amd = "import torch_npu\n" + code
    assert lint(amd, "TRI001") == []
