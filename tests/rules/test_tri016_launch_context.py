"""TRI016 reads how a kernel is launched across the workspace (diagnostics/launch_context.py): a
launcher that another module wraps in `torch.compiler.disable` or registers as a custom op runs
eagerly, where a Python float arrives as fp32, so the kernel is not reported there."""
import textwrap
from pathlib import Path

from tritonify.diagnostics import launch_context
from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.settings import Settings

OPS = '''
import triton
import triton.language as tl


@triton.jit
def _norm_kernel(x_ptr, n, eps, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(x_ptr + offs, x / (x + eps), mask=offs < n)


def _launch(x, eps):
    _norm_kernel[(1,)](x, x.numel(), eps, BLOCK=1024)


class Runner:
    def __call__(self, x, eps):
        _launch(x, eps)


def norm_fwd(x, eps=1e-6):
    Runner()(x, eps)
'''


def _package(tmp_path: Path, **modules: str) -> Path:
    pkg = tmp_path / "mypkg"
    (pkg / "ops").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "ops" / "__init__.py").write_text("")
    (pkg / "ops" / "norm.py").write_text(textwrap.dedent(OPS))
    for name, text in modules.items():
        (pkg / f"{name}.py").write_text(textwrap.dedent(text))
    launch_context._cache.clear()
    return pkg / "ops" / "norm.py"


def _tri016(path: Path) -> list:
    return [f for f in lint_text(path.read_bytes(), str(path), Settings(select=("TRI016",)), on_disk=True).findings
            if f.code == "TRI016"]


def test_reported_where_nothing_says_eager(tmp_path):
    path = _package(tmp_path, model="from mypkg.ops.norm import norm_fwd\n\ndef forward(x):\n    return norm_fwd(x)\n")
    assert len(_tri016(path)) == 1


def test_quiet_when_another_module_disables_compile_on_the_entry_point(tmp_path):
    path = _package(tmp_path, backend="""
        import torch
        from mypkg.ops.norm import norm_fwd

        class Backend:
            def __init__(self):
                self.norm = torch.compiler.disable(norm_fwd)
        """)
    assert _tri016(path) == []


def test_quiet_when_another_module_registers_a_custom_op_that_calls_it(tmp_path):
    path = _package(tmp_path, custom="""
        import torch
        from mypkg.ops import norm as ops

        @torch.library.custom_op("mypkg::norm", mutates_args=("x",))
        def norm(x: torch.Tensor, eps: float) -> None:
            ops.norm_fwd(x, eps)
        """)
    assert _tri016(path) == []


def test_quiet_through_a_package_reexport(tmp_path):
    path = _package(tmp_path, backend="""
        import torch
        from mypkg.ops import norm_fwd

        fwd = torch._dynamo.disable(norm_fwd)
        """)
    assert _tri016(path) == []


def test_quiet_when_registered_by_calling_a_registration(tmp_path):
    path = _package(tmp_path, xpu="""
        from mypkg._ops import register_kernel
        from mypkg.ops import norm as triton_ops

        register_kernel("mypkg::norm", "xpu")(triton_ops.norm_fwd)
        """)
    assert _tri016(path) == []


def test_names_and_roots():
    assert launch_context.is_eager("pkg.ops.attention.decode", "f", frozenset({"pkg.ops.attention.f"}))
    assert not launch_context.is_eager("pkg.ops.attention.decode", "g", frozenset({"pkg.ops.attention.f"}))
