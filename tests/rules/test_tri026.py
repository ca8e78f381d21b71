from tritonify.diagnostics.model import Severity

from tests.lintutil import FIXTURES, lint, lint_fixture, marked_lines
from tests.rules.frontend_check import frontend_errors, marked_kernels, needs_triton

CODE = "TRI026"


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture(f"{CODE}.py", CODE)
    assert [f.line for f in findings] == marked_lines(f"{CODE}.py", CODE)
    assert all(f.severity is Severity.ERROR for f in findings)


@needs_triton
def test_marked_kernels_are_exactly_the_ones_triton_rejects():
    path = FIXTURES / f"{CODE}.py"
    errors = frontend_errors(path)
    expected = marked_kernels(path, CODE)
    assert set(errors) == set(expected)
    wrong = {name: errors[name] for name, marked in expected.items() if marked != (errors[name] is not None)}
    assert wrong == {}


import pytest  # noqa: E402

from tritonify.diagnostics import triton_api  # noqa: E402

SNIPPET = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, tl.tanh(x))
    tl.store(x_ptr + offs, tl.cat(x, x, dim=0))
"""


def test_tanh_gets_the_sigmoid_identity_and_libdevice():
    messages = [f.message for f in lint(SNIPPET, CODE)]
    assert any("`tl` has no `tanh`" in m and "2 * tl.sigmoid(2 * x) - 1" in m and "libdevice.tanh" in m
               for m in messages)


def test_the_version_in_the_environment_decides(monkeypatch):
    monkeypatch.setenv("TRITONIFY_TRITON_VERSION", "3.6.0")
    old = [f.message for f in lint(SNIPPET, CODE)]
    assert any("`tl.cat` has no keyword `dim`" in m and "Triton 3.6.0" in m and "3.7.1" in m for m in old)
    monkeypatch.setenv("TRITONIFY_TRITON_VERSION", "3.9.0")
    new = [f.message for f in lint(SNIPPET, CODE)]
    assert not any("tl.cat" in m for m in new)


def test_a_removed_name_says_where_it_existed(monkeypatch):
    monkeypatch.setenv("TRITONIFY_TRITON_VERSION", "3.9.0")
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(p, BLOCK: tl.constexpr):
        p = tl.advance(p, (0, BLOCK))
    """
    (f,) = lint(code, CODE)
    assert "`tl` has no `advance` in Triton 3.9.0" in f.message and "3.2.0 to 3.8.0" in f.message


@pytest.mark.parametrize("version,expected", [("3.6.1", "3.6.0"), ("3.10.0", "3.9.0"), ("2.3.0", "3.9.0")])
def test_versions_map_to_the_nearest_recorded_one(version, expected):
    assert triton_api.for_version(version).version == expected


def test_the_data_covers_3_2_to_the_newest():
    versions = triton_api.versions()
    assert versions[0].startswith("3.2") and len(versions) >= 8
    for v in versions:
        api = triton_api.for_version(v)
        assert api.lookup("triton.language.load") is None
        assert api.lookup("triton.language.tanh") == ("triton.language", "tanh")
        assert api.lookup("triton.language.extra.cuda.libdevice.tanh") is None


def test_vendor_fork_files_and_version_guarded_definitions_are_not_judged():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr):
        tl.store(x_ptr, tl.extract_slice(x_ptr, 0, 1))
    """
    assert lint(code, CODE, path="backend/_ascend/ops/k.py") == []
    guarded = """
    import triton
    import triton.language as tl

    if hasattr(tl, "tanh"):
        @triton.jit
        def k(x_ptr):
            tl.store(x_ptr, tl.tanh(tl.load(x_ptr)))
    """
    assert lint(guarded, CODE) == []


ANNOTATED = """
import triton
import triton.language as tl

@triton.jit
def _fill_kernel(out_ptr: tl.pointer, n, seed: tl.int64, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), tl.float32), mask=offs < n)
"""


def test_a_parameter_annotation_triton_language_lacks_breaks_the_import():
    # a TritonBench program annotated `out_ptr: tl.pointer` (AttributeError "module 'triton.language'
    # has no attribute 'pointer'"): Python evaluates the annotation when the module is imported, so the
    # error holds whether or not anything launches the kernel (here: nothing does, and it is private)
    (f,) = lint(ANNOTATED, CODE)
    assert f.severity is Severity.ERROR and f.line == 6
    assert "`tl` has no `pointer`" in f.message and "the module does not import" in f.message
    assert lint("from __future__ import annotations\n" + ANNOTATED, CODE) == []   # postponed: not evaluated
    assert lint(ANNOTATED.replace("tl.pointer", "tl.tensor"), CODE) == []
