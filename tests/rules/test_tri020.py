import time

from tritonify.diagnostics.model import Severity

from tests.lintutil import FIXTURES, lint, lint_fixture, marked_lines
from tests.rules.frontend_check import frontend_errors, marked_kernels, needs_triton


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI020.py", "TRI020")
    assert [f.line for f in findings] == marked_lines("TRI020.py", "TRI020")
    assert all(f.severity is Severity.ERROR for f in findings)
    assert all(not f.fixes for f in findings)


@needs_triton
def test_marked_kernels_are_exactly_the_ones_triton_rejects():
    path = FIXTURES / "TRI020.py"
    errors = frontend_errors(path)
    expected = marked_kernels(path, "TRI020")
    assert set(errors) == set(expected)
    wrong = {name: errors[name] for name, marked in expected.items() if marked != (errors[name] is not None)}
    assert wrong == {}


def test_messages_name_the_construct_and_the_way_out():
    by_line = {f.line: f.message for f in lint_fixture("TRI020.py", "TRI020")}
    text = (FIXTURES / "TRI020.py").read_text().splitlines()

    def message(fragment: str) -> str:
        (line,) = [i for i, t in enumerate(text, 1) if fragment in t and "# TRI020" in t]
        return by_line[line]

    assert "tl.abs" in message("abs(tl.load")
    assert "@triton.jit" in message("python_helper(tl.load")
    assert "BLOCK_DEFAULT = tl.constexpr(...)" in message("tl.arange(0, BLOCK_DEFAULT)")
    assert "tuple" in message("for i in range(4)]")
    assert "tl.static_assert" in message('raise ValueError("not implemented")')


_KWARGS_KERNEL = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr, **meta):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
    """


def test_kwargs_parameter_is_reported_at_the_signature(monkeypatch):
    monkeypatch.setenv("TRITONIFY_TRITON_VERSION", "3.9.0")
    (f,) = lint(_KWARGS_KERNEL, "TRI020")
    assert f.line == 6 and "**meta" in f.message and "3.9.0" in f.message


def test_kwargs_parameter_is_left_alone_where_triton_jit_accepts_it(monkeypatch):
    # Triton 3.2-3.8's `JITFunction` takes `**meta` at decoration: a TritonBench-T program with such
    # an (unlaunched) kernel imported and ran on Triton 3.6 (results/freshcode/ground_truth_h200.json)
    monkeypatch.setenv("TRITONIFY_TRITON_VERSION", "3.6.0")
    assert lint(_KWARGS_KERNEL, "TRI020") == []


def test_static_range_else_is_reported_even_when_it_compiles():
    # triton 3.9 compiles this but drops `i = 100`: the kernel stores 5 where Python gives 100
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        i = 3
        for j in tl.static_range(2):
            i = i + 1
        else:
            i = 100
        tl.store(x_ptr + tl.arange(0, BLOCK), i)
    """
    (f,) = lint(code, "TRI020")
    assert f.line == 8 and "dropped" in f.message


def test_nested_scopes_are_reported_once_at_their_head():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        def helper(v):
            try:
                return {v: abs(v)}
            except Exception:
                return lambda: v
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
    """
    (f,) = lint(code, "TRI020")
    assert f.line == 7 and "nested function" in f.message


def test_names_bound_elsewhere_are_not_builtins_or_globals():
    code = """
    import triton
    import triton.language as tl
    from triton.language import sum
    from mylib.kernels import fused_helper

    BLOCK = tl.constexpr(128)
    SCALE = 0.5

    @triton.constexpr_function
    def half(n):
        return n // 2

    @triton.jit
    def k(x_ptr, abs_ptr, BLOCK2: tl.constexpr):
        SCALE = 2.0
        x = tl.load(x_ptr + tl.arange(0, BLOCK))
        tl.static_assert(BLOCK % 16 == 0, str(BLOCK))
        tl.store(x_ptr + tl.arange(0, half(BLOCK)), sum(x, 0) * SCALE + fused_helper(x))
    """
    assert lint(code, "TRI020") == []


def test_host_code_and_decorators_are_not_kernels():
    code = """
    import triton
    import triton.language as tl

    @triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n"])})
    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0, mask=tl.arange(0, BLOCK) < n)

    def launch(x):
        try:
            grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)
            k[grid](x, x.numel())
        finally:
            del x
    """
    assert lint(code, "TRI020") == []


def test_a_long_file_lints_fast():
    kernel = """
@triton.jit
def k{i}(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    for j in range(4):
        x = tl.where(x > j, x * 0.5, x + 1.0)
    tl.store(x_ptr + offs, tl.maximum(x, 0.0), mask=offs < n)
"""
    code = "import triton\nimport triton.language as tl\n" + "".join(kernel.format(i=i) for i in range(400))
    assert len(code.splitlines()) > 3000
    lint(code, "TRI020")  # warm imports
    start = time.process_time()  # CPU time: stable on a loaded CI machine
    assert lint(code, "TRI020") == []
    assert time.process_time() - start < 1.5


EXAMPLE = FIXTURES.parents[2] / "examples" / "triton" / "constructs_row_gather.py"


def test_example_fires_on_each_construct():
    findings = lint(EXAMPLE.read_text(), "TRI020")
    messages = " ".join(f.message for f in findings)
    assert len(findings) == 4
    for fragment in ("ROWS_PER_PROGRAM", "only tuple comprehensions", "`break`", "tl.abs"):
        assert fragment in messages


@needs_triton
def test_example_does_not_compile():
    assert frontend_errors(EXAMPLE)["gather_abs_rows_kernel"] is not None


def test_item_assignment_in_a_vendor_backend_file_is_that_forks_business():
    # real-world class (round 1): flag-gems' Cambricon backend reduces with slice assignment,
    # which Cambricon's Triton fork accepts; upstream Triton does not
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        t = tl.load(x_ptr + tl.arange(0, BLOCK))
        t[: BLOCK // 2] = t[: BLOCK // 2] + t[BLOCK // 2:]
        tl.store(x_ptr, tl.sum(t))
    """
    assert lint(code, "TRI020", path="flag_gems/runtime/backend/_cambricon/ops/prod.py") == []
    assert len(lint(code, "TRI020", path="flag_gems/ops/prod.py")) == 1


# Round 3 of the real-world study: flag-gems' Ascend and Metax backends read annotated
# `X: tl.constexpr = v` globals, which their Triton forks accept. TRI020 states upstream
# Triton's limits, so it speaks only where upstream compiles the code (NVIDIA, AMD or unknown).
FORK_PATHS = (
    "flag_gems/runtime/backend/_ascend/ops/randperm.py",
    "flag_gems/runtime/backend/_metax/ops/exponential_.py",
    "flag_gems/runtime/backend/_cambricon/ops/prod.py",
    "flag_gems/runtime/backend/_kunlunxin/ops/sort.py",
    "flag_gems/runtime/backend/_tsingmicro/fused/x.py",
)


def test_fork_fixture_fires_where_upstream_compiles_it():
    lines = marked_lines("TRI020_fork.py", "TRI020")
    text = (FIXTURES / "TRI020_fork.py").read_text()
    assert [f.line for f in lint_fixture("TRI020_fork.py", "TRI020")] == lines
    assert [f.line for f in lint(text, "TRI020", path="vllm/attention/ops/amd/prefill.py")] == lines
    for path in FORK_PATHS:
        assert lint(text, "TRI020", path=path) == [], path


@needs_triton
def test_fork_fixture_marks_exactly_what_upstream_rejects():
    path = FIXTURES / "TRI020_fork.py"
    errors = frontend_errors(path)
    expected = marked_kernels(path, "TRI020")
    assert {name for name, marked in expected.items() if marked} == {n for n, e in errors.items() if e}


# Reduced from TritonBench-T programs Triton 3.6 rejected with NameError "tl is not defined" (the
# file imports only `triton`) and "compute_polygamma is not defined" (a placeholder never written).
_UNDEFINED_NAMES = """
    import triton
    import torch

    @triton.jit
    def polygamma_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: "tl.constexpr"):
        pid = tl.program_id(0)
        offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + offs, mask=offs < n)
        result = compute_polygamma(n, x)
        tl.store(out_ptr + offs, result, mask=offs < n)
    """


def test_names_bound_nowhere_in_the_file_are_reported_once_each():
    findings = lint(_UNDEFINED_NAMES, "TRI020")
    assert [(f.line, f.message.split("`")[1]) for f in findings] == [(7, "tl"), (10, "compute_polygamma")]
    assert "import triton.language as tl" in findings[0].message
    assert all(f.severity is Severity.ERROR for f in findings)


def test_undefined_names_stay_quiet_wherever_a_binding_may_exist():
    # a star import, a `global` in a host function, a module-level binding under `if`, a name only
    # read in a branch a constexpr condition may prune, and a kernel nested in a function (closure)
    star = _UNDEFINED_NAMES.replace("import torch", "from helpers import *")
    declared = _UNDEFINED_NAMES + """
    def setup():
        global tl, compute_polygamma
    """
    guarded = _UNDEFINED_NAMES.replace("import torch", "if True:\n        import triton.language as tl\n"
                                       "        from sf import compute_polygamma")
    pruned = """
    import triton
    import triton.language as tl

    @triton.jit
    def k(x_ptr, HAS_EXTRA: tl.constexpr):
        if HAS_EXTRA:
            v = extra_value(x_ptr)
    """
    nested = """
    import triton
    import triton.language as tl

    def make(scale):
        @triton.jit
        def k(x_ptr):
            tl.store(x_ptr, scale)
        return k
    """
    for code in (star, declared, guarded, pruned, nested):
        assert [f for f in lint(code, "TRI020") if "is not defined" in f.message] == [], code


def test_a_plain_value_imported_from_a_workspace_module(tmp_path):
    # vLLM's deepencoder kernel reads `LOG2E`, which `vllm.triton_utils` binds as a plain float: Triton
    # looks the name up in the kernel's module globals, where the import put the float (NameError
    # "Cannot access global variable LOG2E" in Triton 3.9's frontend, run on CPU). A `tl.constexpr`
    # value, an annotated one (accepted before 3.9: TRI052's ground) and a parameter default are fine.
    from tritonify.diagnostics.engine import lint_file
    from tritonify.diagnostics.settings import Settings
    from tritonify.diagnostics.workspace_index import WorkspaceIndex

    pkg = tmp_path / "proj" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "triton_utils.py").write_text(
        "import triton.language as tl\nLOG2E = 1.4426950408889634\nBLOCK = 128\n"
        "SCALE = tl.constexpr(2.0)\nANN: tl.constexpr = 32\n")
    kern = pkg / "encoder.py"
    kern.write_text(
        "import triton\nimport triton.language as tl\nfrom pkg.triton_utils import LOG2E, BLOCK, SCALE, ANN\n\n"
        "@triton.jit\ndef attn_kernel(x_ptr, n, B: tl.constexpr = BLOCK):\n"
        "    offs = tl.arange(0, B) + ANN * 0\n"
        "    x = tl.load(x_ptr + offs, mask=offs < n) * SCALE\n"
        "    tl.store(x_ptr + offs, x * LOG2E, mask=offs < n)\n\n"
        "def run(x):\n    attn_kernel[(1,)](x, x.numel())\n")
    index = WorkspaceIndex.build([tmp_path / "proj"])
    found = [f for f in lint_file(kern, Settings(), workspace=index).findings if f.code == "TRI020"]
    assert [(f.line, f.severity) for f in found] == [(9, Severity.ERROR)]
    assert "`LOG2E` is a plain value imported from `pkg.triton_utils`" in found[0].message
    # bound as tl.constexpr where it is defined: quiet
    (pkg / "triton_utils.py").write_text(
        "import triton.language as tl\nLOG2E = tl.constexpr(1.4426950408889634)\nBLOCK = 128\n"
        "SCALE = tl.constexpr(2.0)\nANN: tl.constexpr = 32\n")
    index = WorkspaceIndex.build([tmp_path / "proj"])
    assert [f for f in lint_file(kern, Settings(), workspace=index).findings if f.code == "TRI020"] == []
    # bound plainly, then rebound as tl.constexpr: the value a kernel sees is the constexpr
    (pkg / "triton_utils.py").write_text(
        "import triton.language as tl\nLOG2E = 1.4426950408889634\nLOG2E = tl.constexpr(LOG2E)\nBLOCK = 128\n"
        "SCALE = tl.constexpr(2.0)\nANN: tl.constexpr = 32\n")
    index = WorkspaceIndex.build([tmp_path / "proj"])
    assert [f for f in lint_file(kern, Settings(), workspace=index).findings if f.code == "TRI020"] == []


NESTED = """
import torch
import triton
import triton.language as tl

def airy_ai(x: torch.Tensor, scale=2.0):
    out = torch.empty_like(x)
    {binding}

    @triton.jit
    def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(out_ptr + offs, libdevice.airy_ai(v), mask=offs < n)

    kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    return out
"""


def test_a_kernel_defined_in_a_function_reads_names_bound_nowhere():
    # a TritonBench `airy_ai` program: `libdevice` is bound neither in the module nor in the function
    # around the kernel (NameError "libdevice is not defined" on Triton 3.6; Triton 3.9's frontend too)
    (f,) = lint(NESTED.format(binding="pass"), "TRI020")
    assert f.line == 14 and "`libdevice` is not defined" in f.message
    # bound in the enclosing function (a closure variable): not judged
    bound = NESTED.format(binding="from triton.language.extra import libdevice")
    assert lint(bound, "TRI020") == []
