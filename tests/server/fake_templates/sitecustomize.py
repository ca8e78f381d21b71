"""Installs a stand-in `tritonify.kernels.templates` in a server process started with this
folder on PYTHONPATH. For the plumbing test of "Insert template ..." only (test_lsp_templates.py):
the real templates are another module; this fake never stands for them anywhere else."""
import importlib.util
import sys
import types
from dataclasses import dataclass, field


@dataclass
class FakeTemplate:
    name: str
    title: str
    ops: list = field(default_factory=list)

    def source(self) -> str:
        return f"# template {self.name}: kernel, launcher, reference\n"


_module = types.ModuleType("tritonify.kernels.templates")
# a package over the real folder, so that its one module that is not a template (`insert`, the
# insertion edits) is the real one
_module.__path__ = list(importlib.util.find_spec("tritonify.kernels.templates").submodule_search_locations)
_module.list_templates = lambda: [FakeTemplate("rms_norm", "RMSNorm forward", ["rms_norm"]),
                                  FakeTemplate("swiglu", "SwiGLU", ["swiglu"])]
sys.modules["tritonify.kernels.templates"] = _module
