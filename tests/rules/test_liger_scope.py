"""TRI003/TRI023 stay quiet inside Liger-Kernel's own package, in tests, and on reference
functions kept beside a kernel (issue 13 item 5, issue 16)."""
from __future__ import annotations

import pytest

from tests.lintutil import lint
from tritonify.diagnostics.liger.scope import advice_wanted, in_liger_package, is_reference_function, is_test_file

RMS_KERNEL = """
import triton
import triton.language as tl

@triton.jit
def {name}(X, W, Y, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(W + cols, mask=mask)
    tl.store(Y + row * stride + cols, x * rstd * w, mask=mask)
"""

HOST_NORM = """
import torch
import torch.nn.functional as F

def {name}(hidden, weight, labels):
    logits = hidden @ weight.T
    return F.cross_entropy(logits, labels)
"""


@pytest.mark.parametrize("path", [
    "src/liger_kernel/ops/rms_norm.py",
    "site-packages/liger_kernel/ops/backends/_ascend/ops/rms_norm.py",
    "liger_kernel/testing/helpers.py",
])
def test_liger_package_paths(path):
    assert in_liger_package(path) and not advice_wanted(path)


@pytest.mark.parametrize("path", ["tests/ops/norms.py", "pkg/test_rms_norm.py", "pkg/rms_norm_test.py", "test/conftest.py"])
def test_test_paths(path):
    assert is_test_file(path) and not advice_wanted(path)


@pytest.mark.parametrize("path", ["my_project/ops/rms_norm.py", "liger_kernel_fork.py", "tests/rules/fixtures/TRI003.py",
                                  "contest/latest.py"])
def test_ordinary_paths(path):
    assert advice_wanted(path)


@pytest.mark.parametrize("name,ref", [("rms_norm_ref", True), ("reference_swiglu", True), ("naive_softmax", True),
                                      ("torch_cross_entropy", True), ("linear_cross_entropy_func_ref", True),
                                      ("rms_norm", False), ("prefetch_rows", False), ("torchify", False)])
def test_reference_names(name, ref):
    assert is_reference_function(name) is ref


def test_tri003_fires_in_a_project_file_and_not_in_liger_or_tests():
    code = RMS_KERNEL.format(name="rms_kernel")
    assert len(lint(code, "TRI003", path="my_project/ops/norm.py")) == 1
    assert lint(code, "TRI003", path="vendor/liger_kernel/ops/rms_norm.py") == []
    assert lint(code, "TRI003", path="my_project/tests/test_norm.py") == []


def test_tri003_skips_a_kernel_named_as_a_reference():
    assert lint(RMS_KERNEL.format(name="rms_kernel_ref"), "TRI003", path="my_project/ops/norm.py") == []


def test_tri023_skips_reference_functions_but_not_others():
    assert len(lint(HOST_NORM.format(name="forward"), "TRI023", path="my_project/model.py")) == 1
    assert lint(HOST_NORM.format(name="rms_norm_ref"), "TRI023", path="my_project/model.py") == []
    assert lint(HOST_NORM.format(name="forward"), "TRI023", path="tests/test_model.py") == []


def test_tri023_quiet_in_an_inference_engine_module():
    engine = "from vllm.model_executor.layers.linear import ReplicatedLinear\n" + HOST_NORM.format(name="forward")
    assert lint(engine, "TRI023", path="vllm/model_executor/models/mymodel.py") == []
    trainer = "from transformers import Trainer\n" + HOST_NORM.format(name="forward")
    assert len(lint(trainer, "TRI023", path="my_project/train.py")) == 1


GN_BRANCH = """
import torch.nn as nn
from mypkg.modules import GroupNorm

class Block(nn.Module):
    def __init__(self, heads, dim, fuse_norm):
        super().__init__()
        if fuse_norm:
            self.g_norm = {fused}
        else:
            self.g_norm = nn.GroupNorm(num_groups=heads, num_channels=dim, eps=1e-5)
"""


def test_tri023_quiet_on_a_torch_fallback_beside_the_projects_fused_norm():
    assert lint(GN_BRANCH.format(fused="GroupNorm(num_groups=heads, hidden_size=dim)"), "TRI023", path="pkg/layer.py") == []
    # the other branch is not a norm: the torch GroupNorm is the module's norm, advice applies
    assert len(lint(GN_BRANCH.format(fused="nn.Identity()"), "TRI023", path="pkg/layer.py")) == 1
