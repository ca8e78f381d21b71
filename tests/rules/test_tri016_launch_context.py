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


def test_quiet_when_a_vllm_style_attention_impl_calls_the_launcher(tmp_path):
    # vLLM calls an AttentionImpl's methods inside its opaque unified-attention custom op
    impl = """
        from mypkg.ops.norm import norm_fwd

        class TritonAttentionImpl(AttentionImpl):
            def forward(self, layer, x):
                return norm_fwd(x, self.eps)
        """
    path = _package(tmp_path, backend=impl)
    assert _tri016(path) == []
    # the same class without an attention-implementation base is an ordinary caller
    path = _package(tmp_path / "plain", backend=impl.replace("(AttentionImpl)", "(Base)"))
    assert len(_tri016(path)) == 1


def test_quiet_for_attention_kernels_of_serving_engines_only(tmp_path):
    # vLLM: every attention-family layer is a custom op; sglang: prefill/extend is not compiled
    def at(rel: str) -> Path:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(OPS))
        launch_context._cache.clear()
        return path

    assert _tri016(at("vllm/v1/attention/ops/norm.py")) == []
    assert _tri016(at("sglang/srt/layers/attention/prefill/norm.py")) == []
    assert len(_tri016(at("sglang/srt/layers/attention/decode/norm.py"))) == 1   # decode is compiled
    assert len(_tri016(at("vllm/model_executor/layers/quantization/norm.py"))) == 1  # in the graph
    assert len(_tri016(at("mylib/attention/norm.py"))) == 1   # not a serving engine


def test_one_finding_per_expression():
    code = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, n, scale, alpha, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
            tl.store(x_ptr + offs, tl.exp(x * (scale * alpha)), mask=offs < n)


        def launch(x, scale, alpha):
            k[(1,)](x, x.numel(), scale, alpha, BLOCK=1024)
        ''')
    found = [f for f in lint_text(code.encode(), "<k.py>", Settings(select=("TRI016",))).findings if f.code == "TRI016"]
    assert len(found) == 1 and "`scale`" in found[0].message


def test_quiet_when_the_launcher_has_a_decorator_that_returns_compiler_disable(tmp_path):
    # fla's `@dispatch("attn")`: a registry method returns torch.compiler.disable(wrapper)
    backends = """
        import torch

        class Registry:
            def dispatch(self, fn):
                def wrapper(*args, **kwargs):
                    return fn(*args, **kwargs)
                return torch.compiler.disable(wrapper)

        def dispatch(name):
            return Registry().dispatch
        """
    ops = OPS.replace("def _launch(x, eps):", "@dispatch('norm')\ndef _launch(x, eps):")
    ops = "from mypkg.backends import dispatch\n" + ops
    path = _package(tmp_path, backends=backends)
    path.write_text(textwrap.dedent(ops))
    launch_context._cache.clear()
    assert _tri016(path) == []
    # a decorator that does not disable compilation changes nothing
    plain = _package(tmp_path / "plain", backends=backends.replace("torch.compiler.disable(wrapper)", "wrapper"))
    plain.write_text(textwrap.dedent(ops))
    launch_context._cache.clear()
    assert len(_tri016(plain)) == 1
