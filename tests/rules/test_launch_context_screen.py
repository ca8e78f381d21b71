"""launch_context's package screen (diagnostics/launch_context.py): a module of the package is
parsed only when its text names one of the file's functions, which is all TRI016 asks about, and
the answer is the one a full scan gives."""
import textwrap
from pathlib import Path

from tritonify.diagnostics import launch_context

OPS = """
import triton


@triton.jit
def _norm_kernel(x_ptr):
    pass


def norm_fwd(x):
    _norm_kernel[(1,)](x)
"""


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


def test_only_modules_that_can_name_the_files_functions_are_parsed(tmp_path, monkeypatch):
    """A module that mentions a marker but none of the file's functions cannot name one of them
    eager: it is screened, never parsed, and the answer is the one a full scan gives."""
    path = _package(tmp_path,
                    backend="import torch\nfrom mypkg.ops.norm import norm_fwd\n\nfwd = torch.compiler.disable(norm_fwd)\n",
                    other="import torch\n\n@torch.compiler.disable\ndef unrelated(x):\n    return x\n")
    parsed = []
    real = launch_context._module_names
    monkeypatch.setattr(launch_context, "_module_names", lambda p, root: parsed.append(p.name) or real(p, root))
    module, names = launch_context.eager_names(path)
    assert module == "mypkg.ops.norm"
    assert names == {"mypkg.ops.norm.norm_fwd"}
    assert parsed == ["backend.py"]
    assert launch_context.is_eager(module, "norm_fwd", names)
    # every name a module contributes ends in one of its identifiers (what the screen relies on)
    for p in (path.parents[1]).rglob("*.py"):
        words = launch_context._identifiers(p.read_bytes())
        assert all(n.rsplit(".", 1)[-1] in words for n in real(p, path.parents[2] / "mypkg"))


def test_defined_functions_covers_every_top_level_def():
    text = "def a():\n    def inner(): pass\nasync  def b(): pass\nclass K:\n    def m(self): pass\n\fdef c(): pass\n"
    assert {"a", "b", "c"} <= launch_context.defined_functions(text)
    assert "m" not in launch_context.defined_functions(text)


def test_asked_names_cover_the_files_functions_and_decorators():
    text = ("from pkg.backends import real as dispatch\nimport a.b.c as dd\n@dispatch('x')\ndef f(): pass\n"
            "class K:\n    @ dd . deco\n    def m(self): pass\n")
    functions, decorators = launch_context.asked_names(text)
    assert "f" in functions and "m" not in functions
    assert {"dispatch", "real", "deco", "c"} <= decorators
    assert launch_context.asked_names("@(lambda f: f)\ndef g(): pass\n") is None   # every name is wanted


DISPATCH = """
import torch


def dispatch(name):
    def wrap(fn):
        return torch.compiler.disable(fn)
    return wrap


class Registry:
    def register(self, fn):
        return torch.compiler.disable(fn)
"""


def test_every_name_ends_in_what_its_module_can_be_screened_by(tmp_path):
    """What the screen relies on: a name `@module.f` (a decorator that returns
    torch.compiler.disable) ends in a function the module defines at its top level; every other
    name in one of the module's identifiers."""
    path = _package(tmp_path, backends=DISPATCH,
                    backend="import torch\nfrom mypkg.ops.norm import norm_fwd\n\nfwd = torch.compiler.disable(norm_fwd)\n")
    root = path.parents[1]
    for p in root.rglob("*.py"):
        text = p.read_text()
        for name in launch_context._module_names(p, root):
            last = name.rsplit(".", 1)[-1]
            if name.startswith("@"):
                assert last in launch_context.defined_functions(text), name
            else:
                assert last in launch_context._identifiers(p.read_bytes()), name
