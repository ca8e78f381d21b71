"""diagnostics/target.py: which hardware a file or a branch is written for."""
import ast
import textwrap
from pathlib import Path

import pytest

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.settings import Settings, SettingsError, from_table
from tritonify.diagnostics.source import SourceFile
from tritonify.diagnostics.target import import_target, path_target


def _ctx(code: str, path: str = "kernel.py", settings: Settings | None = None) -> PythonContext:
    text = textwrap.dedent(code)
    return PythonContext(SourceFile.from_text(text, path), settings=settings or Settings())


def _node(ctx: PythonContext, marker: str) -> ast.AST:
    """The expression statement on the line that carries `# <marker>`."""
    line = next(i for i, t in enumerate(ctx.source.text.splitlines(), 1) if f"# {marker}" in t)
    return next(n for n in ctx.module_nodes if isinstance(n, ast.Expr) and n.lineno == line)


@pytest.mark.parametrize("path, expected", [
    ("flag_gems/runtime/backend/_ascend/ops/softmax.py", "npu"),
    ("flag_gems/runtime/backend/_nvidia/hopper/topk.py", "nvidia"),
    ("flag_gems/runtime/backend/_cambricon/ops/celu.py", "mlu"),
    ("flag_gems/runtime/backend/_kunlunxin/ops/mm.py", "kunlunxin"),
    ("flag_gems/runtime/backend/_mthreads/ops/mm.py", "musa"),
    ("flag_gems/runtime/backend/_enflame/gcu300/ops/trace.py", "gcu"),
    ("flag_gems/runtime/backend/_arm/ops/add.py", "cpu"),
    ("fla/ops/common/backends/triton_ascend/chunk_o.py", "npu"),
    ("fla/modules/fused_cross_entropy/triton_ascend.py", "npu"),
    ("sglang/kernels/ops/attention/sparse_decode_reduce_hip.py", "amd"),
    ("sglang/kernels/ops/gemm/mxfp8_native_amd_gfx95.py", "amd"),
    ("sglang/srt/hardware_backend/musa/kernels/topk.py", "musa"),
    ("vllm/models/kimi_k3/amd/ops/kda_prefill.py", "amd"),
    ("vllm/models/deepseek_v4/xpu/model.py", "xpu"),
    ("vllm/models/deepseek_v4/cpu/cpu_mla.py", "cpu"),
    # no vendor words: unknown (words inside other words do not count)
    ("fla/ops/gla/chunk.py", None),
    ("sglang/kernels/ops/moe/shipping_router.py", None),
    ("liger_kernel/ops/cross_entropy.py", None),
    ("kernels/copy_to_cpu_kernel.py", None),
])
def test_path_target(path, expected):
    assert path_target(path) == expected


def test_path_relative_to_root():
    root = Path("/home/amd/projects/lib")
    assert path_target(str(root / "ops" / "norm.py"), root) is None
    assert path_target(str(root / "ops" / "rocm_norm.py"), root) == "amd"


def test_unguarded_imports_name_the_target_guarded_ones_do_not():
    assert import_target(ast.parse("import torch_npu\nimport triton")) == "npu"
    assert import_target(ast.parse("from aiter.ops.triton import gemm")) == "amd"
    assert import_target(ast.parse("from triton.language.extra.cann.extension import x")) == "npu"
    assert import_target(ast.parse("from triton.language.extra.cuda import libdevice")) == "nvidia"
    guarded = "import torch\nif torch.version.hip:\n    import aiter\ntry:\n    import torch_npu\nexcept ImportError:\n    pass\n"
    assert import_target(ast.parse(guarded)) is None


BRANCHES = """
import torch
import triton

_is_hip = torch.version.hip is not None

if _is_hip:
    a  # amd-body
else:
    b  # else-of-hip
if not IS_NPU:
    c  # not-npu-body
else:
    d  # else-of-not-npu
if current_platform.is_rocm():
    e  # rocm-call
if torch.version.hip:
    f  # version-hip
if x.is_cuda:
    g  # tensor-is-cuda
if current_platform.is_cuda_alike():
    h  # cuda-alike
if backend == "hip":
    i  # backend-eq
if backend != "npu":
    j  # backend-ne
else:
    k  # backend-ne-else
if IS_HIP and BLOCK > 16:
    l  # hip-and
if _is_cuda:
    m  # is-cuda
y = 1 if is_hip() else 2  # ifexp


def rms_norm_npu(x):
    n  # function-name


def plain():
    o  # plain
"""


@pytest.mark.parametrize("marker, expected", [
    ("amd-body", "amd"), ("else-of-hip", None), ("not-npu-body", None), ("else-of-not-npu", "npu"),
    ("rocm-call", "amd"), ("version-hip", "amd"), ("tensor-is-cuda", None), ("cuda-alike", None),
    ("backend-eq", "amd"), ("backend-ne", None), ("backend-ne-else", "npu"), ("hip-and", "amd"),
    ("is-cuda", "nvidia"), ("function-name", "npu"), ("plain", None),
])
def test_branch_and_function_targets(marker, expected):
    ctx = _ctx(BRANCHES)
    assert ctx.target.of(_node(ctx, marker)) == expected
    assert ctx.target.nvidia(_node(ctx, marker)) is (expected in (None, "nvidia"))


def test_conditional_expression_branches():
    ctx = _ctx("y = a if is_hip() else b\n")
    ifexp = next(n for n in ctx.module_nodes if isinstance(n, ast.IfExp))
    assert ctx.target.of(ifexp.body) == "amd"
    assert ctx.target.of(ifexp.orelse) is None


def test_branch_wins_over_file_and_setting_is_the_fallback():
    code = "if _is_cuda:\n    a  # cuda\nb  # rest\n"
    ctx = _ctx(code, path="vllm/models/x/amd/ops.py")
    assert ctx.target.of(_node(ctx, "cuda")) == "nvidia"
    assert ctx.target.of(_node(ctx, "rest")) == "amd"
    ctx = _ctx(code, settings=Settings(target="amd"))
    assert ctx.target.file == "amd"
    assert not ctx.target.nvidia(_node(ctx, "rest"))
    # detection from the path beats the project-wide setting
    ctx = _ctx(code, path="backend/_nvidia/ops.py", settings=Settings(target="amd"))
    assert ctx.target.nvidia(_node(ctx, "rest"))


def test_target_setting_is_validated():
    assert from_table({"target": "NPU"}).target == "npu"
    assert from_table({}).target == "auto"
    with pytest.raises(SettingsError, match="unknown target 'tpu'"):
        from_table({"target": "tpu"})


@pytest.mark.parametrize("path, upstream", [
    ("kernel.py", True),
    ("vllm/models/kimi_k3/amd/ops/kda_prefill.py", True),
    ("flag_gems/runtime/backend/_nvidia/hopper/topk.py", True),
    ("flag_gems/runtime/backend/_cambricon/ops/celu.py", False),
    ("flag_gems/runtime/backend/_metax/ops/exponential_.py", False),
    ("flag_gems/runtime/backend/_ascend/ops/softmax.py", False),
    ("flag_gems/runtime/backend/_arm/ops/add.py", False),
])
def test_upstream_is_nvidia_amd_or_unknown(path, upstream):
    ctx = _ctx("x  # here\n", path)
    assert ctx.target.upstream(_node(ctx, "here")) is upstream
