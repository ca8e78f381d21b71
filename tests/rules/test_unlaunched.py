"""A compile break is an error where something launches or calls the kernel, a warning saying so where
nothing in its module does (diagnostics.unlaunched; Triton compiles a kernel at its first launch).

Measured on the freshcode ground truth (results/freshcode/): of the programs that compiled and ran,
11 of the 16 with an error finding had it in a kernel nothing in the program launched."""
from __future__ import annotations

import textwrap

from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.model import Severity
from tritonify.diagnostics.settings import Settings

KERNEL = """
import torch
import triton
import triton.language as tl

@triton.jit
def {helper}(x):
    for i in range(4):
        if i == 2:
            break
    return x

@triton.jit
def {name}(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, {helper}(x), mask=offs < n)
"""

HOST_LAUNCH = """
def run(x):
    {name}[(triton.cdiv(x.numel(), 128),)](x, x.numel(), BLOCK=128)
"""

HOST_WITHOUT_LAUNCH = """
def run(x):
    return torch.relu(x)
"""


def _breaks(text: str):
    result = lint_text(textwrap.dedent(text), "program.py", Settings())
    found = [f for f in result.findings if f.code == "TRI020"]
    assert found, "the `break` must be found"
    return found


def _program(name="scale_kernel", helper="clamp_helper", host=""):
    return KERNEL.format(name=name, helper=helper) + host.format(name=name)


def test_a_launched_kernel_and_its_helper_get_errors():
    for f in _breaks(_program(host=HOST_LAUNCH)):
        assert f.severity is Severity.ERROR
        assert "nothing in this file launches" not in f.message


def test_a_kernel_its_module_never_launches_gets_a_warning_that_says_so():
    for f in _breaks(_program(host=HOST_WITHOUT_LAUNCH)):
        assert f.severity is Severity.WARNING
        # the helper is called only by the kernel nothing launches: it is unlaunched too
        assert "nothing in this file launches or calls `clamp_helper`" in f.message


def test_a_public_kernel_of_a_kernel_only_module_keeps_its_error():
    # its launcher may live in another module, which imports it by name
    for f in _breaks(_program()):
        assert f.severity is Severity.ERROR


def test_a_private_helper_of_a_public_kernel_in_a_kernel_only_module_keeps_its_error():
    # the helper is reached from a kernel another module may launch
    for f in _breaks(_program(helper="_clamp_helper")):
        assert f.severity is Severity.ERROR


def test_a_private_kernel_nothing_names_is_unlaunched_even_in_a_kernel_only_module():
    for f in _breaks(_program(name="_scale_kernel", helper="_clamp_helper")):
        assert f.severity is Severity.WARNING


def test_a_kernel_named_by_a_string_or_an_alias_counts_as_launched():
    named = _program() + '\nKERNELS = {"scale": "scale_kernel"}\ndef run(x):\n    return x\n'
    aliased = _program() + "\nalias = scale_kernel\ndef run(x):\n    return x\n"
    for text in (named, aliased):
        assert all(f.severity is Severity.ERROR for f in _breaks(text))


OTHER_KERNEL_LAUNCHED = """
@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def run(x, y):
    copy_kernel[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
"""


def _tri020(text: str):
    return [f for f in lint_text(textwrap.dedent(text), "program.py", Settings()).findings if f.code == "TRI020"]


def test_a_kernel_the_module_never_names_keeps_its_breaks_as_warnings_beside_the_ones_it_launches():
    # flag-gems' mhc_bwd.py: `_mhc_bwd_kernel` (a `continue` in its loop) beside the `_n4` variant its
    # host code launches. Text cannot tell such a leftover from a kernel being written whose launcher
    # is not there yet (a second kernel added to a file that launches the first): its break stays, as a
    # warning that says nothing launches it (the engine drops only what a size guard rules out)
    found = _tri020(_program(name="_scale_kernel", helper="_clamp_helper", host=OTHER_KERNEL_LAUNCHED))
    assert found and all(f.severity is Severity.WARNING and "nothing in this file launches" in f.message for f in found)


def test_a_public_kernel_nothing_launches_keeps_its_break_as_a_warning_whoever_imports_it(tmp_path):
    # flag-gems' softmax.py: a public `next_multiple_of` helper (`tl.cidv`) nothing calls any more and
    # no other file imports; a public function another module imports may be launched there
    from tritonify.diagnostics.engine import lint_file
    from tritonify.diagnostics.unlaunched import _imported_in_project

    pkg = tmp_path / "proj" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    mod = pkg / "ops.py"
    mod.write_text(textwrap.dedent(_program(host=OTHER_KERNEL_LAUNCHED)))

    def tri020():
        _imported_in_project.cache_clear()
        return [f for f in lint_file(mod, Settings()).findings if f.code == "TRI020"]

    assert tri020() and all(f.severity is Severity.WARNING for f in tri020())
    (pkg / "user.py").write_text("from pkg.ops import scale_kernel\n")
    found = tri020()
    assert found and all(f.severity is Severity.WARNING for f in found)
    (pkg / "user.py").write_text("import pkg.ops as ops\nK = ops.scale_kernel\n")
    assert tri020() and all(f.severity is Severity.WARNING for f in tri020())
    # text with no file behind it (an unsaved buffer): a public one keeps its warning
    assert all(f.severity is Severity.WARNING for f in _tri020(_program(host=OTHER_KERNEL_LAUNCHED)))


def test_the_dead_kernels_breaks_are_errors_once_its_launch_is_written():
    launched = _program(host=OTHER_KERNEL_LAUNCHED) + HOST_LAUNCH.format(name="scale_kernel").replace("def run", "def run2")
    found = _tri020(launched)
    assert found and all(f.severity is Severity.ERROR for f in found)


SETTINGS_MODULE = """
import triton

def calculate_settings(n):
    BLOCK_SIZE = triton.next_power_of_2(n)
    if BLOCK_SIZE > 65536:
        raise RuntimeError("too large")
    return BLOCK_SIZE, 4
"""

SOFTMAX_MODULE = """
import torch
import triton
import triton.language as tl
from pkg.utils import calculate_settings

@triton.jit
def _single_block_kernel(y_ptr, x_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    offs = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + tl.program_id(0) * n_cols + offs, mask=offs < n_cols, other=-float("inf"))
    tl.store(y_ptr + tl.program_id(0) * n_cols + offs, tl.exp(x - tl.max(x, 0)), mask=offs < n_cols)

@triton.jit
def _multi_block_kernel(y_ptr, x_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    m = tl.float32(-float("inf"))
    for start in tl.range(0, n_cols, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        m = tl.maximum(m, tl.max(tl.load(x_ptr + offs, mask=offs < n_cols, other=-float("inf")), 0))
    tl.store(y_ptr, m)

def softmax(x):
    *batch, n_cols = x.shape
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    y = torch.empty_like(x)
    if n_cols {op} BLOCK_SIZE:
        _single_block_kernel[(x.shape[0],)](y, x, n_cols, BLOCK_SIZE=BLOCK_SIZE)
    else:
        _multi_block_kernel[(x.shape[0],)](y, x, n_cols, BLOCK_SIZE=BLOCK_SIZE)
    return y
"""


def test_a_kernel_launched_only_where_a_size_guard_rules_out_is_dead(tmp_path):
    # Liger's softmax: `BLOCK_SIZE, num_warps = calculate_settings(n_cols)` (next_power_of_2(n_cols),
    # in another module), then the multi-block kernel only in the `else` of `n_cols <= BLOCK_SIZE`:
    # its `tl.float32(...)` (TypeError on every Triton) never compiles
    from tritonify.diagnostics.engine import lint_file
    from tritonify.diagnostics.workspace_index import WorkspaceIndex

    pkg = tmp_path / "proj" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "utils.py").write_text(SETTINGS_MODULE)
    mod = pkg / "softmax.py"

    def tri026(op: str, settings: str = SETTINGS_MODULE):
        (pkg / "utils.py").write_text(settings)
        mod.write_text(SOFTMAX_MODULE.replace("{op}", op))
        return [f for f in lint_file(mod, Settings(), workspace=WorkspaceIndex()).findings if f.code == "TRI026"]

    assert tri026("<=") == []
    # `<` is false for a power-of-two width: the multi-block launch can run
    assert [f.severity for f in tri026("<")] == [Severity.ERROR]
    # a block size that is not the next power of two of the width proves nothing
    capped = SETTINGS_MODULE.replace("triton.next_power_of_2(n)", "min(triton.next_power_of_2(n), 4096)")
    assert [f.severity for f in tri026("<=", capped)] == [Severity.ERROR]


HELPERS = """
import triton
import triton.language as tl

@triton.jit
def next_multiple_of(a, b):
    return tl.cidv(a, b) * b

@triton.jit
def prev_multiple_of(a, b):
    return tl.cdiv(a, b) * b - b

@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = prev_multiple_of(n, BLOCK) + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def run(x, y):
    copy_kernel[(1,)](x, y, x.numel(), BLOCK=128)
"""


def _tri026_in(tmp_path, text: str, other: str | None = None):
    from tritonify.diagnostics.engine import lint_file
    from tritonify.diagnostics.unlaunched import _imported_in_project

    pkg = tmp_path / "proj" / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "user.py").write_text(other or "")
    mod = pkg / "ops.py"
    mod.write_text(textwrap.dedent(text))
    _imported_in_project.cache_clear()
    return [f for f in lint_file(mod, Settings()).findings if f.code == "TRI026"]


def test_a_helper_nothing_calls_beside_launched_kernels_is_dead(tmp_path):
    # flag-gems' softmax.py: the @jit helper `next_multiple_of` (`tl.cidv`, no such function) beside
    # `prev_multiple_of`, which the launched kernel calls; nothing in the project names it
    assert _tri026_in(tmp_path, HELPERS) == []


def test_a_helper_something_names_keeps_its_break(tmp_path):
    # called by a kernel: an error
    called = HELPERS.replace("prev_multiple_of(n, BLOCK) +", "next_multiple_of(n, BLOCK) +")
    assert [f.severity for f in _tri026_in(tmp_path, called)] == [Severity.ERROR]
    # exported in __all__ (a string naming it counts as a call): an error; imported by another file
    # of the project: a warning, as before
    exported = HELPERS + '\n__all__ = ["next_multiple_of"]\n'
    assert [f.severity for f in _tri026_in(tmp_path, exported)] == [Severity.ERROR]
    imported = _tri026_in(tmp_path, HELPERS, other="from pkg.ops import next_multiple_of\n")
    assert [f.severity for f in imported] == [Severity.WARNING]
    # an unsaved buffer (no project to search): a public helper may be imported, it keeps its warning
    assert [f.severity for f in lint_text(textwrap.dedent(HELPERS), "program.py", Settings()).findings
            if f.code == "TRI026"] == [Severity.WARNING]


def test_a_kernel_being_written_keeps_the_break_of_the_helper_it_calls(tmp_path):
    # the new kernel names the helper: the helper is not uncalled, and neither is reported dead
    typed = HELPERS + textwrap.dedent("""
        @triton.jit
        def _pad_kernel(x_ptr, n, BLOCK: tl.constexpr):
            tl.store(x_ptr + next_multiple_of(n, BLOCK), 0.0)
        """)
    found = _tri026_in(tmp_path, typed)
    assert [f.severity for f in found] == [Severity.WARNING]
    assert "nothing in this file launches or calls `next_multiple_of`" in found[0].message


AUTOGRAD_SOFTMAX = SOFTMAX_MODULE.split("def softmax(x):")[0].replace(
    "_multi_block_kernel(y_ptr", "_multi_block_bwd_kernel(y_ptr").replace(
    "_single_block_kernel(y_ptr", "_single_block_bwd_kernel(y_ptr") + '''
def _forward(x):
    *batch, n_cols = x.shape
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    y = torch.empty_like(x)
    if n_cols <= BLOCK_SIZE:
        multi_block_launch = False
    else:
        multi_block_launch = True
    return y, BLOCK_SIZE, num_warps, multi_block_launch

def _backward(dy, y, BLOCK_SIZE, num_warps, multi_block_launch):
    *batch, n_cols = dy.shape
    dx = torch.empty_like(dy)
    if not multi_block_launch and n_cols <= BLOCK_SIZE:
        _single_block_bwd_kernel[(dy.shape[0],)](dx, dy, n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    else:
        _multi_block_bwd_kernel[(dy.shape[0],)](dx, dy, n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return dx

class SoftmaxFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input_):
        y, BLOCK_SIZE, num_warps, multi_block_launch = _forward(input_)
        ctx.save_for_backward(y)
        ctx.BLOCK_SIZE = BLOCK_SIZE
        ctx.num_warps = num_warps
        ctx.multi_block_launch = multi_block_launch
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return _backward(grad_output, y, ctx.BLOCK_SIZE, ctx.num_warps, ctx.multi_block_launch)
'''


def test_a_backward_launch_that_the_forwards_saved_size_guard_rules_out_is_dead(tmp_path):
    # Liger's softmax.py: the forward saves `multi_block_launch` (True only in the `else` of
    # `n_cols <= BLOCK_SIZE`, a next_power_of_2(n_cols)) and BLOCK_SIZE on ctx; the backward launches
    # its multi-block kernel (`tl.float32(...)`, a TypeError) only where `not multi_block_launch and
    # n_cols <= BLOCK_SIZE` fails, with n_cols the gradient's last dimension: never
    from tritonify.diagnostics.engine import lint_file
    from tritonify.diagnostics.workspace_index import WorkspaceIndex

    pkg = tmp_path / "proj" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "utils.py").write_text(SETTINGS_MODULE)
    mod = pkg / "softmax.py"

    def tri026(text: str):
        mod.write_text(text)
        return [f.severity for f in lint_file(mod, Settings(), workspace=WorkspaceIndex()).findings if f.code == "TRI026"]

    assert tri026(AUTOGRAD_SOFTMAX) == []
    # the flag set True where the forward can get: the multi-block backward can run
    assert tri026(AUTOGRAD_SOFTMAX.replace("    if n_cols <= BLOCK_SIZE:\n        multi_block_launch = False",
                                           "    if n_cols < BLOCK_SIZE:\n        multi_block_launch = False")) == [Severity.ERROR]
    # the backward's width read from another tensor than the gradient proves nothing
    assert tri026(AUTOGRAD_SOFTMAX.replace("*batch, n_cols = dy.shape", "*batch, n_cols = y.shape")) == [Severity.ERROR]
    # a block size saved from something other than the forward's input width proves nothing
    assert tri026(AUTOGRAD_SOFTMAX.replace("calculate_settings(n_cols)", "calculate_settings(n_cols * 2)")) == [Severity.ERROR]
    # the backward helper also called from elsewhere, with arguments nobody saved
    assert tri026(AUTOGRAD_SOFTMAX + "\ndef other(dy, y):\n    return _backward(dy, y, 64, 4, True)\n") == [Severity.ERROR]


def test_a_general_kernel_a_launched_variant_superseded_is_dead_and_a_new_one_keeps_its_warning():
    # flag-gems' mhc_bwd.py: `_mhc_bwd_kernel` (a `continue` in its loop), never named, beside
    # `_mhc_bwd_kernel_n4`, which the host launches for n_stream == 4 (a PyTorch reference otherwise)
    variant = OTHER_KERNEL_LAUNCHED.replace("copy_kernel", "_scale_kernel_n4")
    assert _tri020(_program(name="_scale_kernel", helper="_clamp_helper", host=variant)) == []
    # a kernel being written with a name of its own, or a longer one (`_v2`), keeps its warning
    for name in ("_scale2_kernel", "_scale_kernel_n4_v2"):
        found = _tri020(_program(name=name, helper="_clamp_helper", host=variant))
        assert found and all(f.severity is Severity.WARNING for f in found)


def test_a_helper_dropped_as_dead_comes_back_once_an_open_file_imports_it(tmp_path):
    # the editor: ops.py's helper is dead, then the user types its import into another open file;
    # the project scan is not answered from its cache (the index tells it the project changed)
    from tritonify.diagnostics.engine import lint_file
    from tritonify.diagnostics.workspace_index import default_index

    assert _tri026_in(tmp_path, HELPERS) == []
    user = tmp_path / "proj" / "pkg" / "user.py"
    default_index().update(str(user), "from pkg.ops import next_multiple_of\n")
    try:
        again = [f for f in lint_file(tmp_path / "proj" / "pkg" / "ops.py", Settings()).findings if f.code == "TRI026"]
        assert [f.severity for f in again] == [Severity.WARNING]
    finally:
        default_index().forget(str(user))


def _softmax_package(tmp_path):
    pkg = tmp_path / "proj" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "utils.py").write_text(SETTINGS_MODULE)
    mod = pkg / "softmax.py"
    mod.write_text(AUTOGRAD_SOFTMAX)
    return mod


def test_the_size_guard_reading_uses_the_linters_walk_and_walks_the_module_no_more(tmp_path, monkeypatch):
    # TRI022 asks which kernels are dead on every lint while typing, and that reads the host code's
    # size guards (unreachable_host_lines): with whole-module `ast.walk`s of its own (one per autograd
    # class search, two per backward helper) it took 25 ms of the editor's first answer on fla's
    # parallax file, against 1.3 ms from the context's one walk (session 12)
    import ast

    from tritonify.diagnostics.context import PythonContext
    from tritonify.diagnostics.source import SourceFile
    from tritonify.diagnostics.unlaunched import unreachable_host_lines
    from tritonify.diagnostics.workspace_index import WorkspaceIndex

    mod = _softmax_package(tmp_path)
    ctx = PythonContext(SourceFile.from_text(AUTOGRAD_SOFTMAX, str(mod)), workspace=WorkspaceIndex())
    assert ctx.kernels
    walked = []
    real_walk = ast.walk
    monkeypatch.setattr(ast, "walk", lambda node: (walked.append(node), real_walk(node))[1])
    lines = ctx._unreachable_host
    classes = [n for n in ctx.module_nodes if isinstance(n, ast.ClassDef)]
    assert not any(n is ctx.tree or any(n is c for c in classes) for n in walked)
    # the lines the guards rule out: the forward's `multi_block_launch = True` and both `else`s
    text_lines = AUTOGRAD_SOFTMAX.split("\n")
    ruled_out = {text_lines[n - 1].strip() for n in lines}
    assert "multi_block_launch = True" in ruled_out
    assert any(line.startswith("_multi_block_bwd_kernel[") for line in ruled_out)
    # the same lines as from a walk of its own
    monkeypatch.setattr(ast, "walk", real_walk)
    assert lines == unreachable_host_lines(ctx.tree, ctx.kernels, ctx.imports.resolve, ctx._function_of)


def _typed_key_by_key(path: str, text: str, kernel: str, statement: str, after: str):
    """Type `statement` key by key into `kernel` of the module `text` at `path` (a line of its own
    after the first line of the kernel that starts with `after`), as the editor's lint worker does:
    a full lint of the text, then an incremental one (with its first answer) at every key. Asserts
    that at every key the whole answer is a full lint's of the same text (the worker's, which reads a
    half-typed statement as the incremental one does) and that each first answer's TRI022 rows are
    the whole answer's. Returns (the last answer, the line typed on, how many first answers came)."""
    from tritonify.server import lint_worker

    settings = Settings()

    def said(findings):
        return sorted((f.code, f.line, f.column, f.end_line, f.end_column, f.message, f.severity) for f in findings)

    lint_worker.lint_with_kernels(text, path, settings, "full")
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"def {kernel}("))
    at = next(i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith(after))
    first_answers = 0
    for n in range(1, len(statement) + 1):
        typed = "\n".join(lines[:at + 1] + ["    " + statement[:n]] + lines[at + 1:])
        firsts = []
        result, _, _ = lint_worker.lint_with_kernels(typed, path, settings, "incremental",
                                                     first_answer=lambda answer: firsts.append(answer[0]))
        base = lint_worker._PREVIOUS[path]   # the next key builds on this incremental answer, not on the full one
        full, _, exact = lint_worker.lint_with_kernels(typed, path, settings, "full")
        lint_worker._PREVIOUS[path] = base
        assert exact
        assert said(result.findings) == said(full.findings), f"{n} keys typed"
        for first in firsts:
            assert said(f for f in first.findings if f.code == "TRI022") == \
                said(f for f in result.findings if f.code == "TRI022")
        first_answers += len(firsts)
    return result, at + 2, first_answers


def test_typing_a_print_into_the_autograd_softmaxs_live_kernel_gives_the_full_lints_answer_at_every_key(tmp_path):
    # the editor's path (the lint worker's incremental lint, its first answer, the size guards read
    # across the autograd Function's ctx): at every key the full lint's answer, the finished print
    # is reported, and the dead multi-block kernel's `tl.float32` break stays dropped
    mod = _softmax_package(tmp_path)
    result, line, first_answers = _typed_key_by_key(str(mod), AUTOGRAD_SOFTMAX, "_single_block_bwd_kernel",
                                                    'tl.device_print("typed", n_cols)', "tl.store(")
    assert first_answers >= 1   # the key that completes the print: its TRI022 row comes first
    assert [f.line for f in result.findings if f.code == "TRI022"] == [line]
    assert not [f for f in result.findings if f.code == "TRI026"]


CHAIN = """
import triton
import triton.language as tl

@triton.jit
def _inner(x):
    y = x * 2
    return y

@triton.jit
def _middle(x):
    return _inner(x) + 1

@triton.jit
def _kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, _middle(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)

def run(x):
    _kernel[(1,)](x, x.numel(), BLOCK=128)
"""


def test_typing_into_a_kernel_the_full_lint_treats_as_dead_or_live_through_others_gives_its_answer_at_every_key(tmp_path):
    # the typing-time lint re-lints a cut-down text (the edited kernel, its helpers and callers);
    # which kernels are dead is still the whole file's answer (session 12: typing into the softmax's
    # dead multi-block backward kernel showed its dropped `tl.float32` break and a TRI020 as
    # warnings that went away after the pause: the cut-down text launched no kernel at all)
    mod = _softmax_package(tmp_path)
    result, _, _ = _typed_key_by_key(str(mod), AUTOGRAD_SOFTMAX, "_multi_block_bwd_kernel",
                                     'tl.device_print("typed", n_cols)', "tl.store(")
    assert not [f for f in result.findings if f.code in ("TRI022", "TRI026")]   # dead: no print, no break
    # a helper reached only through a caller's caller (`_kernel` -> `_middle` -> `_inner`, which the
    # cut-down text leaves out): its break is an error at every key, as in the full lint
    ops = tmp_path / "ops.py"
    ops.write_text(CHAIN)
    result, line, _ = _typed_key_by_key(str(ops), CHAIN, "_inner", "y = tl.float32(y)", "y =")
    assert [(f.code, f.line, f.severity) for f in result.findings] == [("TRI026", line, Severity.ERROR)]
