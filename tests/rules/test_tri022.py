import ast

from tritonify.diagnostics.model import Applicability, Severity
from tests.lintutil import fixed, lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI022.py", "TRI022")
    assert [f.line for f in findings] == marked_lines("TRI022.py", "TRI022")
    static = [f for f in findings if "static_print" in f.message]
    assert len(static) == 1 and static[0].severity is Severity.INFO


SNIPPET = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_print("x", x)  # looking at x
    tl.store(x_ptr + offs, x)
"""


def test_fix_deletes_the_whole_line():
    (f,) = lint(SNIPPET, "TRI022")
    assert "DEBUG: tl.constexpr" in f.message
    assert f.fixes[0].applicability is Applicability.UNSAFE
    out = fixed(SNIPPET, f)
    assert "device_print" not in out and "looking at x" not in out
    assert "    x = tl.load(x_ptr + offs)\n    tl.store(x_ptr + offs, x)\n" in out
    ast.parse(out)


def test_only_statement_in_block_becomes_pass():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, n):
        x = tl.load(x_ptr)
        if n > 0:
            print("n", n)
        tl.store(x_ptr, x)
    """
    (f,) = lint(code, "TRI022")
    out = fixed(code, f)
    assert "    if n > 0:\n        pass\n" in out
    ast.parse(out)


def test_gated_prints_asserts_and_host_prints_are_quiet():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def helper(x, VERBOSE):
        if VERBOSE:
            tl.device_print("x", x)
        return x

    @triton.jit
    def k(x_ptr, DEBUG: tl.constexpr):
        x = tl.load(x_ptr)
        if DEBUG:
            tl.device_print("x", x)
        tl.device_assert(x == x)
        tl.store(x_ptr, helper(x, DEBUG))

    def host():
        print("done")
    """
    assert lint(code, "TRI022") == []


def test_private_function_nothing_uses_is_quiet():
    """Issue 26: prints in a private jit function that its module never calls or launches are dead
    code; the same function once called from a kernel, or a public one, is reported."""
    code = """
import triton
import triton.language as tl

@triton.jit
def _debug_dump(x_ptr, BLOCK: tl.constexpr):
    tl.device_print("x", tl.load(x_ptr + tl.arange(0, BLOCK)))

@triton.jit
def kernel(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.zeros((BLOCK,), tl.float32))
"""
    assert lint(code, "TRI022") == []
    called = code.replace("    tl.store(x_ptr", "    _debug_dump(x_ptr, BLOCK)\n    tl.store(x_ptr")
    assert [f.line for f in lint(called, "TRI022")] == [7]
    public = code.replace("_debug_dump", "debug_dump")
    assert [f.line for f in lint(public, "TRI022")] == [7]


def test_public_helper_beside_the_kernels_its_module_launches_is_quiet(tmp_path):
    """A public jit helper with a print that nothing names, in a module whose host code launches its
    other kernel and that no other file of the project imports, is dead too
    (diagnostics.unlaunched.dead_functions); called from that kernel, it is reported."""
    from tritonify.diagnostics.engine import lint_file
    from tritonify.diagnostics.settings import Settings
    from tritonify.diagnostics.unlaunched import _imported_in_project

    code = """
import triton
import triton.language as tl

@triton.jit
def debug_dump(x_ptr, BLOCK: tl.constexpr):
    tl.device_print("x", tl.load(x_ptr + tl.arange(0, BLOCK)))

@triton.jit
def kernel(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.zeros((BLOCK,), tl.float32))

def run(x):
    kernel[(1,)](x, BLOCK=128)
"""
    pkg = tmp_path / "proj" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    mod = pkg / "ops.py"

    def lines(text):
        mod.write_text(text)
        _imported_in_project.cache_clear()
        return [f.line for f in lint_file(mod, Settings()).findings if f.code == "TRI022"]

    assert lines(code) == []
    assert lines(code.replace("    tl.store(x_ptr", "    debug_dump(x_ptr, BLOCK)\n    tl.store(x_ptr")) == [7]
    assert lint(code, "TRI022") != []   # an unsaved buffer: no project to ask, a public helper counts
