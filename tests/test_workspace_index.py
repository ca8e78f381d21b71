"""diagnostics/workspace_index.py: names imported from other modules of the same code base
resolve to Triton through re-exports, statically (nothing is imported or run)."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.engine import lint_file
from tritonify.diagnostics.settings import Settings
from tritonify.diagnostics.source import SourceFile
from tritonify.diagnostics.triton_ast import ImportMap, find_kernels
from tritonify.diagnostics.workspace_index import WorkspaceIndex, guess_triton

PKG = Path(__file__).parent / "fixtures" / "reexport_pkg"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


def imports_of(path: Path, index: WorkspaceIndex | None = None) -> tuple[ImportMap, list[str]]:
    tree = ast.parse(path.read_text())
    imports = ImportMap(tree, workspace=index or WorkspaceIndex(), path=str(path))
    return imports, [k.name for k in find_kernels(tree, imports)]


KERNEL = """
@{decorator}
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
"""


# ---- the committed fixture package --------------------------------------------------------

def test_conditional_reexport_resolves_to_triton():
    imports, kernels = imports_of(PKG / "ops" / "softmax.py")
    assert imports.names["tl"] == "triton.language" and imports.names["triton"] == "triton"
    assert kernels == ["softmax_kernel"]


def test_relative_imports_of_aliases_and_a_reexported_decorator():
    imports, kernels = imports_of(PKG / "ops" / "activation.py")
    assert imports.names["exp"] == "triton.language.exp"
    assert imports.names["triton_tanh"] == "triton.language.extra.libdevice.tanh"
    assert imports.names["jit"] == "triton.jit"
    assert kernels == ["tanh_loop_kernel", "mish_kernel"]


def test_decorators_under_other_names_and_module_attributes():
    imports, kernels = imports_of(PKG / "ops" / "renamed.py")
    assert kernels == ["scale_kernel", "add_kernel", "neg_kernel"]
    tree = ast.parse("compat.triton.language.load")
    assert imports.resolve(tree.body[0].value) == "triton.language.load"


def test_helpers_and_constants_from_another_module():
    imports, _ = imports_of(PKG / "ops" / "softmax.py")
    call = ast.parse("fast_exp(x)").body[0].value
    helper = imports.helper(call.func)
    assert helper is not None and helper.name == "fast_exp" and helper.module == "reexport_pkg.utils.math"
    assert imports.resolve(call.func) == "reexport_pkg.utils.math.fast_exp"
    node, source = helper
    assert isinstance(node, ast.FunctionDef) and node.name == "fast_exp"
    assert "def fast_exp(x):" in source and source == (PKG / "utils" / "math.py").read_text()
    # the helper's own names resolve in its module: tl.exp2 there is Triton's
    inner = [n for n in ast.walk(node) if isinstance(n, ast.Call)][0]
    assert helper.imports().resolve(inner.func) == "triton.language.exp2"
    assert ast.literal_eval(imports.constant(ast.Name("LOG2E"))) == pytest.approx(1.4426950408889634)
    assert imports.constant(ast.Name("fast_exp")) is None


def test_helper_def_by_dotted_name():
    index = WorkspaceIndex()
    imports_of(PKG / "ops" / "softmax.py", index)   # the index has seen the package
    helper = index.helper_def("reexport_pkg.utils.math.softplus")
    assert helper is not None and helper.node.name == "softplus"
    # through the package's re-export too, and nothing for what is not a jit function
    assert index.helper_def("reexport_pkg.utils.fast_exp").node.name == "fast_exp"
    assert index.helper_def("reexport_pkg.utils.math.LOG2E") is None
    assert index.helper_def("reexport_pkg.nothing.here") is None


def test_engine_lints_through_the_reexport():
    # TRI001 fires on a libdevice tanh in a loop only if `triton_tanh` is known for what it is
    findings = lint_file(PKG / "ops" / "activation.py", Settings(select=("TRI001",))).findings
    assert [(f.code, f.line) for f in findings] == [("TRI001", 12)]


# ---- each re-export form, in a package written for the test --------------------------------

@pytest.mark.parametrize("compat", [
    # try/except
    """
    try:
        import triton
        import triton.language as tl
    except ImportError:
        triton = None
        tl = None
    """,
    # placeholders first, the real thing after
    """
    import os
    if os.environ.get("NO_TRITON"):
        from .stub import triton, tl
    else:
        import triton
        from triton import language as tl
    """,
    # a star re-export, limited by __all__
    """
    from triton import *  # noqa
    import triton
    import triton.language as tl
    __all__ = ["triton", "tl"]
    """,
    # re-exported once more from a sub-package
    """
    from .deep.inner import tl, triton
    """,
])
def test_reexport_forms(tmp_path, compat):
    write(tmp_path, {
        "mypkg/__init__.py": "",
        "mypkg/compat.py": compat,
        "mypkg/stub.py": "triton = object()\ntl = object()\n",
        "mypkg/deep/__init__.py": "",
        "mypkg/deep/inner.py": "import triton\nimport triton.language as tl\n",
        "mypkg/kernels/k.py": "from mypkg.compat import tl, triton\n" + KERNEL.format(decorator="triton.jit"),
    })
    imports, kernels = imports_of(tmp_path / "mypkg" / "kernels" / "k.py")
    assert imports.names["tl"] == "triton.language"
    assert kernels == ["k"]


def test_star_import_of_a_workspace_module(tmp_path):
    write(tmp_path, {
        "p/__init__.py": "",
        "p/compat.py": "import triton\nimport triton.language as tl\nimport os\n__all__ = ['tl', 'triton']\n",
        "p/k.py": "from .compat import *\n" + KERNEL.format(decorator="triton.jit"),
    })
    imports, kernels = imports_of(tmp_path / "p" / "k.py")
    assert imports.names["tl"] == "triton.language" and "os" not in imports.names
    assert kernels == ["k"]


def test_import_module_as_triton(tmp_path):
    write(tmp_path, {
        "p/__init__.py": "",
        "p/triton_shim.py": "from triton import jit, autotune\nimport triton.language as language\n",
        "p/k.py": "import p.triton_shim as triton\ntl = triton.language\n" + KERNEL.format(decorator="triton.jit"),
    })
    imports, kernels = imports_of(tmp_path / "p" / "k.py")
    assert imports.names["tl"] == "triton.language"
    assert kernels == ["k"]


def test_decorator_aliases(tmp_path):
    write(tmp_path, {
        "p/__init__.py": "",
        "p/jits.py": """
            import functools
            import triton
            from triton import jit as _jit
            jit = triton.jit
            jit_nospec = triton.jit(do_not_specialize=["n"])
            jit_partial = functools.partial(triton.jit, do_not_specialize=["n"])
            reexported = _jit
            """,
        "p/k.py": "import triton.language as tl\nfrom .jits import jit, jit_nospec, jit_partial, reexported\n"
                  + KERNEL.format(decorator="jit").replace("def k(", "def a(")
                  + KERNEL.format(decorator="jit_nospec").replace("def k(", "def b(")
                  + KERNEL.format(decorator="jit_partial").replace("def k(", "def c(")
                  + KERNEL.format(decorator="reexported").replace("def k(", "def d("),
    })
    _, kernels = imports_of(tmp_path / "p" / "k.py")
    assert kernels == ["a", "b", "c", "d"]


def test_a_workspace_name_that_is_not_triton_stays_what_it_is(tmp_path):
    # `jit` here is a plain function of the package, `triton` a class: neither is Triton's
    write(tmp_path, {
        "p/__init__.py": "",
        "p/tools.py": "def jit(f):\n    return f\n\nclass triton:\n    pass\n\nLIMIT = 3\nLIMIT = 4\n",
        "p/k.py": "from .tools import jit, triton, LIMIT\n\n@jit\ndef f(x):\n    return x\n",
    })
    imports, kernels = imports_of(tmp_path / "p" / "k.py")
    assert kernels == []
    assert imports.names["jit"] == "p.tools.jit" and imports.names["triton"] == "p.tools.triton"
    assert imports.constant(ast.Name("LIMIT")) is None   # assigned twice with two values


def test_package_with_missing_init_files(tmp_path):
    # the corpus keeps only the files that mention Triton: vllm/__init__.py is not there
    write(tmp_path, {
        "vllm/triton_utils/__init__.py": "import triton\nimport triton.language as tl\n",
        "vllm/model/layers/k.py": "from vllm.triton_utils import tl, triton\n" + KERNEL.format(decorator="triton.jit"),
    })
    index = WorkspaceIndex()
    imports, kernels = imports_of(tmp_path / "vllm" / "model" / "layers" / "k.py", index)
    assert index.resolve("vllm.triton_utils.tl", tmp_path / "vllm" / "model" / "layers" / "k.py").kind == "triton"
    assert imports.names["tl"] == "triton.language" and kernels == ["k"]


def test_cycles_and_self_references_end(tmp_path):
    write(tmp_path, {
        "p/__init__.py": "",
        "p/a.py": "from .b import tl\nx = x\n",
        "p/b.py": "from .a import tl\n",
        "p/k.py": "from .a import tl, x\n",
    })
    imports, _ = imports_of(tmp_path / "p" / "k.py")
    assert imports.names["tl"] == "triton.language"   # unresolvable: the `tl` guess
    assert imports.names["x"] == "p.a.x"


def test_nothing_is_executed(tmp_path):
    marker = tmp_path / "ran"
    write(tmp_path, {
        "p/__init__.py": f"open({str(marker)!r}, 'w').write('x')\nimport triton\n",
        "p/k.py": f"from p import triton\nopen({str(marker)!r}, 'w')\n" + "import triton.language as tl\n"
                  + KERNEL.format(decorator="triton.jit"),
    })
    _, kernels = imports_of(tmp_path / "p" / "k.py")
    assert kernels == ["k"] and not marker.exists()


# ---- a file alone: the guesses ---------------------------------------------------------------

def test_file_alone_falls_back_to_guesses(tmp_path):
    # activation.py copied out of its package: `..triton_compat` and `..utils.math` are not there
    alone = tmp_path / "activation.py"
    alone.write_text((PKG / "ops" / "activation.py").read_text())
    imports, kernels = imports_of(alone)
    assert imports.names["tl"] == "triton.language" and imports.names["jit"] == "triton.jit"
    assert kernels == ["tanh_loop_kernel", "mish_kernel"]
    # the same text with no file behind it
    ctx = PythonContext(SourceFile.from_text(alone.read_text(), "<stdin>"), workspace=WorkspaceIndex())
    assert [k.name for k in ctx.kernels] == ["tanh_loop_kernel", "mish_kernel"]


def test_vllm_style_file_alone():
    code = "from vllm.triton_utils import tl, triton\n" + KERNEL.format(decorator="triton.jit")
    tree = ast.parse(code)
    assert [k.name for k in find_kernels(tree, ImportMap(tree))] == ["k"]


@pytest.mark.parametrize("module, name, expected", [
    ("vllm.triton_utils", "tl", "triton.language"),
    ("anything", "tl", "triton.language"),
    ("vllm.triton_utils", "triton", "triton"),
    ("vllm.triton_utils", "tldevice", "triton.language.extra.libdevice"),
    (".triton_compat", "jit", "triton.jit"),
    ("..utils.math", "jit", "triton.jit"),
    (".", "triton", None),                      # `from . import triton`: a sub-package
    ("torch._inductor.config", "triton", None),  # a config section named triton
    ("numba", "jit", None),
    ("mypkg.helpers", "exp", None),
])
def test_guesses(module, name, expected):
    assert guess_triton(module, name) == expected


# ---- the editor's text ---------------------------------------------------------------------

def test_update_replaces_the_disk_text(tmp_path):
    write(tmp_path, {
        "p/__init__.py": "",
        "p/compat.py": "import triton\njit = triton.jit\n",
        "p/k.py": "import triton.language as tl\nfrom .compat import jit\n" + KERNEL.format(decorator="jit"),
    })
    index = WorkspaceIndex()
    k = tmp_path / "p" / "k.py"
    assert imports_of(k, index)[1] == ["k"]
    # opening a file as it is on disk changes nothing others see
    assert index.update(k, k.read_text()) is False
    assert index.update(tmp_path / "p" / "compat.py", "def jit(f):\n    return f\n") is True
    assert imports_of(k, index)[1] == []
    assert index.update(tmp_path / "p" / "compat.py", "def jit(f):\n    return f\n") is False  # same text
    # a body edit changes nothing another module can import
    assert index.update(tmp_path / "p" / "compat.py", "def jit(f):\n    return f  # same\n") is False
    index.forget(tmp_path / "p" / "compat.py")          # back to the file on disk
    assert imports_of(k, index)[1] == ["k"]


def test_rules_see_constants_of_other_modules(tmp_path):
    # tl.arange needs a power-of-two size: 96 is not, and only the imported constant says so
    write(tmp_path, {
        "p/__init__.py": "",
        "p/config.py": "BLOCK = 96\nGOOD = 128\n",
        "p/k.py": """
            import triton
            import triton.language as tl
            from .config import BLOCK, GOOD


            @triton.jit
            def k(x_ptr, n):
                offs = tl.arange(0, BLOCK)
                good = tl.arange(0, GOOD)
                tl.store(x_ptr + offs, tl.load(x_ptr + good, mask=good < n), mask=offs < n)
            """,
    })
    findings = lint_file(tmp_path / "p" / "k.py", Settings(select=("TRI004",))).findings
    assert [(f.code, f.line) for f in findings] == [("TRI004", 9)]


def test_helper_body_follows_the_editor(tmp_path):
    write(tmp_path, {
        "p/__init__.py": "",
        "p/h.py": "import triton\nimport triton.language as tl\n\n@triton.jit\ndef act(x):\n    return tl.exp(x)\n",
        "p/k.py": "from .h import act\n",
    })
    index = WorkspaceIndex()
    imports, _ = imports_of(tmp_path / "p" / "k.py", index)
    body = imports.helper(ast.Name("act")).node.body[0].value
    assert imports.helper(ast.Name("act")).imports().resolve(body.func) == "triton.language.exp"
    index.update(tmp_path / "p" / "h.py",
                 "import triton\nimport triton.language as tl\n\n@triton.jit\ndef act(x):\n    return tl.sigmoid(x)\n")
    helper = index.helper_def("p.h.act")
    assert helper.imports().resolve(helper.node.body[0].value.func) == "triton.language.sigmoid"


def test_unreadable_and_broken_modules_resolve_to_nothing(tmp_path):
    nested = "if x:\n" + "".join("    " * i + "if x:\n" for i in range(1, 300)) + "    " * 300 + "import triton\n"
    write(tmp_path, {
        "p/__init__.py": "",
        "p/broken.py": "def (:\n",
        "p/nul.py": "import triton\0\n",
        "p/deep.py": nested,
        "p/k.py": "from .broken import jit\nfrom .nul import triton\nfrom .deep import triton as t2\nfrom .gone import tl\n",
    })
    (tmp_path / "p" / "binary.py").write_bytes(b"\xff\xfe\x00garbage")
    index = WorkspaceIndex()
    imports, kernels = imports_of(tmp_path / "p" / "k.py", index)
    assert kernels == []
    assert imports.names["tl"] == "triton.language"   # `.gone` is not there: the guess
    assert imports.names["jit"] == "triton.jit"      # `.broken` does not parse: the guess
    for name in ("broken", "nul", "deep", "binary", "gone"):
        index.summary(tmp_path / "p" / f"{name}.py")
    index.update(tmp_path / "p" / "deep.py", nested)


def test_triton_imported_inside_the_function_that_defines_kernels(tmp_path):
    # torchao builds its kernels inside a function that imports Triton (no module-level import)
    code = textwrap.dedent("""
        def build():
            import triton
            import triton.language as tl
            from triton.language.extra import libdevice

            @triton.jit
            def k(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, libdevice.tanh(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)

            return k


        def other():
            tl = [1, 2]          # a local of another function does not undo the import
            return tl
        """)
    tree = ast.parse(code)
    imports = ImportMap(tree)
    assert imports.names["tl"] == "triton.language" and imports.names["libdevice"] == "triton.language.extra.libdevice"
    assert [k.name for k in find_kernels(tree, imports)] == ["k"]
    # two different Triton meanings for one name in two functions: neither is assumed
    both = ast.parse("def a():\n    import triton.language as t\n\ndef b():\n    import triton as t\n")
    assert "t" not in ImportMap(both).names


def test_one_index_shared_by_threads_gives_what_one_thread_gets():
    from concurrent.futures import ThreadPoolExecutor

    files = sorted(PKG.rglob("*.py")) * 8
    # each file's own tree is parsed here, on one thread: CPython 3.11's ast.parse is not safe on
    # several threads at once ("AST constructor recursion depth mismatch", python/cpython#106905);
    # what the threads share is the index, which parses the modules it reads under its lock
    trees = {f: ast.parse(f.read_text()) for f in set(files)}

    def kernels(index, f):
        imports = ImportMap(trees[f], workspace=index, path=str(f))
        return f, [k.name for k in find_kernels(trees[f], imports)]

    alone = dict(kernels(WorkspaceIndex(), f) for f in files)
    shared = WorkspaceIndex()
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda f: kernels(shared, f), files))
    assert all(found == alone[f] for f, found in together)
    assert sum(len(k) for k in alone.values()) == 8   # softmax 1, activation 2, renamed 3, math 2


# ---- reading a module for its summary: module-level statements only ----------------------

TRICKY = '''\
"""Module docstring with a line at column 0:
def not_a_function():
"""
import triton
import triton.language as tl
from .compat import (
    jit as my_jit,
)

LOG2E = 1.4426950408889634
BLOCK = tl.constexpr(64)
__all__ = ["act", "BLOCK", "LOG2E", "Box", "late", "one", "cond"]


@triton.jit
def act(x):
    """A docstring whose lines start at column 0:
HIDDEN = 1
def hidden():
"""
    y = foo(x,
1)   # a bracket continued at column 0
    s = '#not a comment' + "(" + \'\'\'[\'\'\'
    return tl.exp(y)


@my_jit(
    do_not_specialize=["n"],
)
async def late(x) -> dict[str, int]:
    return {"a": 1}


class Box:
    INNER = 3
    def method(self):
        return 1


def one(): return 1
VALUE = \\
    5
if HAS_TRITON:
    @triton.jit
    def cond(x):
        return x
else:
    cond = None
try:
    from .fast import fast_exp
except ImportError:
    fast_exp = tl.exp
'''


def _summary_key(s):
    from tritonify.diagnostics.workspace_index import Def, exports_of

    lines = sorted((n, b.lineno) for n, bs in s.bindings.items() for b in bs if isinstance(b, Def))
    return exports_of(s), lines, s.all_names


def test_module_level_text_keeps_every_module_level_binding(tmp_path):
    from tritonify.diagnostics.workspace_index import module_level_text, summarise

    stripped = module_level_text(TRICKY)
    assert stripped is not None
    assert stripped.count("\n") == TRICKY.count("\n")             # every line kept: linenos stay
    assert "tl.exp(y)" not in stripped and "INNER" not in stripped and "{\"a\": 1}" not in stripped
    assert "def one(): return 1" in stripped and "    def cond(x):\n        return x" in stripped
    path = tmp_path / "m.py"
    full = summarise(ast.parse(TRICKY), path, "m")
    assert _summary_key(summarise(ast.parse(stripped), path, "m")) == _summary_key(full)
    assert "HIDDEN" not in full.bindings and "hidden" not in full.bindings
    assert {"act", "late", "Box", "one", "VALUE", "cond", "fast_exp", "LOG2E"} <= set(full.bindings)


@pytest.mark.parametrize("text", [
    "def f():\n\treturn 1\n",              # a tab: indentation this does not follow
    "x = 'open\ndef f():\n    pass\n",    # a quote that opens no string
    "x = (1,\ndef f():\n    pass\n",      # brackets that do not balance
])
def test_module_level_text_gives_up_where_it_cannot_follow(text):
    from tritonify.diagnostics.workspace_index import module_level_text

    assert module_level_text(text) is None


def test_a_module_with_tabs_is_still_summarised_from_its_whole_text(tmp_path):
    write(tmp_path, {"p/__init__.py": "", "p/h.py": "import triton\n@triton.jit\ndef act(x):\n\treturn x\nN = 96\n"})
    index = WorkspaceIndex()
    h = index.resolve("p.h.act", tmp_path / "p" / "k.py")
    assert h is not None and h.kind == "helper" and h.helper.node.name == "act"
    n = index.resolve("p.h.N", tmp_path / "p" / "k.py")
    assert n.kind == "constant" and n.node.value == 96


def test_a_body_that_does_not_parse_leaves_the_module_names(tmp_path):
    # summaries read module-level statements only: a syntax error inside a function body (a
    # helper being edited) leaves the module's other names resolvable; the helper's tree is
    # read from the whole text, which does not parse, so it has none
    write(tmp_path, {"p/__init__.py": "",
                     "p/h.py": "import triton\nN = 64\n\n@triton.jit\ndef act(x):\n    return x +\n"})
    index = WorkspaceIndex()
    origin = tmp_path / "p" / "k.py"
    assert index.resolve("p.h.N", origin).node.value == 64
    act = index.resolve("p.h.act", origin)
    assert act.kind == "helper" and act.helper.node is None


def test_an_edit_to_an_imported_module_changes_the_next_lint(tmp_path, monkeypatch):
    # the index keeps each module's summary for the process: an edit (on disk, or the editor's
    # text) to the imported module is what the next lint of its importer sees
    import tritonify.diagnostics.workspace_index as workspace_index

    monkeypatch.setattr(workspace_index, "_REFRESH_S", 0.0)
    write(tmp_path, {
        "p/__init__.py": "",
        "p/config.py": "import triton\n\n@triton.jit\ndef helper(x):\n    return x\n\n\nBLOCK = 96\n",
        "p/k.py": """
            import triton
            import triton.language as tl
            from .config import BLOCK


            @triton.jit
            def k(x_ptr, n):
                offs = tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
            """,
    })
    index = WorkspaceIndex()
    settings = Settings(select=("TRI004",))
    k, config = tmp_path / "p" / "k.py", tmp_path / "p" / "config.py"
    assert [(f.code, f.line) for f in lint_file(k, settings, workspace=index).findings] == [("TRI004", 9)]
    config.write_text(config.read_text().replace("BLOCK = 96", "BLOCK = 128"))
    assert index.refresh_disk() is True
    assert lint_file(k, settings, workspace=index).findings == []
    index.update(config, config.read_text().replace("BLOCK = 128", "BLOCK = 48"))   # the editor's text
    assert [(f.code, f.line) for f in lint_file(k, settings, workspace=index).findings] == [("TRI004", 9)]


def test_module_level_text_drops_a_large_display_value_only(tmp_path):
    from tritonify.diagnostics.workspace_index import module_level_text, summarise

    rows = "".join(f"    ({i}, 'cfg'): {{'BLOCK': {i}}},\n" for i in range(200))   # well over 2,000 characters
    names = "".join(f'    "n{i}",\n' for i in range(300))
    text = (
        "import triton.language as tl\n"
        f"CONFIGS: dict[tuple, dict] = {{\n{rows}}}\n"
        f"PICK = {{\n{rows}}}[(3, 'cfg')]\n"
        f"__all__ = [\n{names}]\n"
        f"A = {{\n{rows}}}; B = 64\n"
        "AFTER = tl.constexpr(32)\n"
    )
    stripped = module_level_text(text)
    assert stripped is not None and stripped.count("\n") == text.count("\n")
    assert "CONFIGS: dict[tuple, dict] = None" in stripped and "PICK = None" in stripped
    assert '"n299"' in stripped and "B = 64" in stripped   # __all__ is read, and a `;` line kept whole
    path = tmp_path / "m.py"
    full = summarise(ast.parse(text), path, "m")
    assert _summary_key(summarise(ast.parse(stripped), path, "m")) == _summary_key(full)
    assert full.all_names[-1] == "n299" and "AFTER" in full.bindings and "B" in full.bindings
