"""The source-only build (kernel_source.py, mode=SOURCE_ONLY): what the language server compiles on
open and save. No statement of the file runs, not even a default value, an annotation or a
decorator of the kernel's own `def`; what the kernel needs beyond literals is named."""
from __future__ import annotations

import ast
import textwrap

import pytest

from tritonify.tools.compile.kernel_source import NotLiteral, eval_heuristic, needed_names, read_source

SOURCE = textwrap.dedent('''\
    import os
    import triton
    import triton.language as tl
    from helpers import scale_of

    BLOCK_DEFAULT = 256
    DTYPE = tl.float16
    ONE = tl.constexpr(1)
    COMPUTED = os.getpid()


    def side_effect(fn):
        os.system("touch MARKER/decorator")
        return fn


    @side_effect
    @triton.jit
    def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr = BLOCK_DEFAULT):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(y_ptr + offs, _twice(x).to(DTYPE) * ONE, mask=offs < n)


    @triton.jit
    def _twice(x):
        return x + x


    @triton.jit
    def odd_default(x_ptr, EXTRA: tl.constexpr = os.system("touch MARKER/default")):
        tl.store(x_ptr, 1.0)


    @triton.jit
    def odd_annotation(x_ptr, EXTRA: os.system("touch MARKER/annotation") = 1) -> os.system("touch MARKER/returns"):
        tl.store(x_ptr, 1.0)


    @triton.jit
    def needs_things(x_ptr):
        tl.store(x_ptr, scale_of(COMPUTED) + undefined_name)
''')


def test_needed_names_follow_helpers_and_skip_literals_and_triton():
    source = read_source(ast.parse(SOURCE))
    assert needed_names(source, "copy") == []
    assert needed_names(source, "odd_default") == ["os"]
    assert needed_names(source, "odd_annotation") == ["os"]
    assert set(needed_names(source, "needs_things")) == {"scale_of", "COMPUTED", "undefined_name"}
    assert source.constants["BLOCK_DEFAULT"] == ("literal", 256)
    assert source.constants["ONE"] == ("constexpr", 1)
    assert source.constants["DTYPE"] == ("attr", "triton.language.float16")
    assert "COMPUTED" not in source.constants and "COMPUTED" in source.other


@pytest.mark.parametrize("expr,args,value", [
    ('lambda args: args["n"] % args["BLOCK"] == 0', {"n": 4096, "BLOCK": 1024}, True),
    ('lambda args: triton.next_power_of_2(args["n"])', {"n": 1000}, 1024),
    ('lambda a: min(a["n"], 64) if a["n"] > 8 else 8', {"n": 4096}, 64),
    ('lambda args: triton.cdiv(args["n"], 128) * 2', {"n": 1000}, 16),
])
def test_simple_heuristics_are_evaluated(expr, args, value):
    source = read_source(ast.parse("import triton\n"))
    assert eval_heuristic(source, ast.parse(expr, mode="eval").body, args) == value


@pytest.mark.parametrize("expr", [
    'lambda args: __import__("os").system("touch x")',
    'lambda args: args["x_ptr"].dtype == 1',
    'lambda args: open("f").read()',
    'lambda args: (2 ** 10) ** (10 ** 10)',
    'lambda args: args["missing"] + 1',
    'lambda args, more: 1',
])
def test_anything_else_in_a_heuristic_is_refused_unevaluated(expr):
    source = read_source(ast.parse("import triton\n"))
    with pytest.raises(NotLiteral):
        eval_heuristic(source, ast.parse(expr, mode="eval").body, {"n": 4096})


def test_compiled_from_source_with_no_statement_of_the_file_run(compile_env, tmp_path):
    pytest.importorskip("triton")
    from tritonify.tools.compile.service import NOT_INSPECTED, SOURCE_ONLY, inspect_file

    markers = tmp_path / "markers"
    markers.mkdir()
    (tmp_path / "helpers.py").write_text("import os\nos.system('touch %s/import')\nscale_of = abs\n" % markers)
    text = SOURCE.replace("MARKER", str(markers))
    path = tmp_path / "kernels.py"
    path.write_text(text)
    results = {r.kernel: r for r in inspect_file(text, str(path), target="sm_90", trusted=True, mode=SOURCE_ONLY)}
    assert sorted(p.name for p in markers.iterdir()) == []
    copy = results["copy"]
    assert copy.error is None and copy.variants and copy.variants[0].resources is not None, copy.error
    assert copy.variants[0].constexprs["BLOCK"] == 256           # the literal constant the default names
    assert "needs os" in results["odd_default"].error["message"]
    assert "needs os" in results["odd_annotation"].error["message"]
    needs = results["needs_things"]
    assert needs.error["kind"] == NOT_INSPECTED and "scale_of" in needs.error["message"]


def test_autotune_configs_that_are_not_literals_are_not_run(compile_env, tmp_path):
    pytest.importorskip("triton")
    from tritonify.tools.compile.service import SOURCE_ONLY, inspect_kernel

    marker = tmp_path / "configs-ran"
    text = textwrap.dedent(f'''\
        import os
        import triton
        import triton.language as tl


        def configs():
            os.system("touch {marker}")
            return [triton.Config({{"BLOCK": 128}})]


        @triton.autotune(configs=configs(), key=["n"])
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, 1.0, mask=offs < n)
    ''')
    result = inspect_kernel(text, str(tmp_path / "k.py"), "k", target="sm_90", trusted=True, mode=SOURCE_ONLY)
    assert result.error and "autotune configs" in result.error["message"]
    assert not marker.exists()


def test_a_file_of_many_kernels_compiles_only_the_first_few(compile_env, tmp_path):
    pytest.importorskip("triton")
    from tritonify.tools.compile.service import NOT_INSPECTED, SOURCE_ONLY, inspect_file

    one = textwrap.dedent('''\

        @triton.jit
        def k{i}(x_ptr):
            tl.store(x_ptr, {i}.0)
    ''')
    text = "import triton\nimport triton.language as tl\n" + "".join(one.format(i=i) for i in range(200))
    results = inspect_file(text, str(tmp_path / "many.py"), target="sm_90", trusted=True, mode=SOURCE_ONLY,
                           max_kernels=2)
    assert [r.kernel for r in results] == [f"k{i}" for i in range(200)]
    assert all(r.error is None for r in results[:2])
    assert all(r.error["kind"] == NOT_INSPECTED and "more than 2 kernels" in r.error["message"] for r in results[2:])
