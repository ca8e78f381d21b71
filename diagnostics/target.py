"""Which hardware a piece of Triton code is written for: NVIDIA, AMD, an NPU, the CPU, or another vendor.

Several rules rest on NVIDIA facts (libdevice's `__nv_tanhf`, PTX `tanh.approx`, TF32 tensor
cores, `ex2.approx` folding, CUDA FP64 rates). Libraries ship the same kernels for other
backends side by side (`runtime/backend/_ascend/`, `backends/triton_ascend/`, `*_hip.py`,
`if _is_hip:` branches), and those premises do not hold there. This module is the one place
that decides; rules ask `ctx.target.nvidia(node)` ("may NVIDIA premises be applied here?") or
`ctx.target.upstream(node)` ("is this compiled by upstream Triton?": NVIDIA, AMD or unknown; the
vendor forks for NPUs, MLUs, XPUs and the like accept constructs upstream rejects).

What is read, innermost first (the first answer wins):
1. the branch a node sits in: `if _is_hip:`, `if torch.version.hip:`, `if current_platform.is_rocm():`,
   `if IS_NPU:` (a constexpr flag too), `x if is_hip() else y`, `if backend == "hip":`; the `else:`
   of `if not X:` counts as X. The `else:` of `if X:` says nothing (it may be any other target);
2. the names of the enclosing functions (`_attn_fwd_hip`, `rmsnorm_npu`);
3. the file's path, relative to the settings root: folder and file-name words (`_ascend/`,
   `triton_ascend.py`, `backend/_nvidia/`, `amd/`, `rocm_*.py`, `*_gfx950.py`, `hardware_backend/npu/`,
   `_cambricon/`, `xpu/`, `cpu/`);
4. unguarded module-level imports: `torch_npu`, `triton.language.extra.cann` (NPU),
   `aiter`, `triton.language.extra.hip` (AMD), `triton.language.extra.mlu`, `torch_mlu`, `torch_musa`,
   `intel_extension_for_pytorch`, `triton.language.extra.cuda` (NVIDIA);
5. the project's `target` setting (`[tool.tritonify] target = "amd"`), "auto" meaning unknown.

Unknown code is treated as NVIDIA's (the common case): only positive evidence of another target
silences an NVIDIA-premised rule.
"""
from __future__ import annotations

import ast
import re
from pathlib import PurePath
from typing import TYPE_CHECKING

from tritonify.diagnostics.triton_ast import dotted

if TYPE_CHECKING:  # pragma: no cover
    from tritonify.diagnostics.context import PythonContext

NVIDIA = "nvidia"
AMD = "amd"
NPU = "npu"
CPU = "cpu"
SETTING_VALUES = ("auto", NVIDIA, AMD, NPU, CPU)
# The targets upstream Triton (triton-lang/triton) compiles for; None is unknown code.
UPSTREAM = (None, NVIDIA, AMD)

# A word (of a path part, a function name or a flag) -> the target it names.
_WORDS = {
    "nvidia": NVIDIA,
    "amd": AMD, "rocm": AMD, "hip": AMD, "aiter": AMD, "hygon": AMD, "dcu": AMD,
    "npu": NPU, "ascend": NPU, "cann": NPU,
    "xpu": "xpu", "intel": "xpu",
    "mlu": "mlu", "cambricon": "mlu",
    "musa": "musa", "mthreads": "musa",
    "gcu": "gcu", "enflame": "gcu",
    "kunlunxin": "kunlunxin", "kunlun": "kunlunxin",
    "iluvatar": "iluvatar", "metax": "metax", "tsingmicro": "tsingmicro",
    "sunrise": "sunrise", "aipu": "aipu",
}
# Words that name a target only as a whole folder name (too common inside other names).
_FOLDER_ONLY = {"cpu": CPU, "arm": CPU, "cuda": NVIDIA}
# Flags and predicates: `is_cuda()`/`_is_cuda`/`IS_CUDA` mean NVIDIA; a tensor's `.is_cuda` does not
# (it is true on ROCm too), nor does `is_cuda_alike()`.
_FLAG_WORDS = {**_WORDS, "cuda": NVIDIA}
_FLAG_PREFIXES = ("is", "use", "on", "has", "running")
_GFX = re.compile(r"^gfx\d+[a-z]?$")

_IMPORTS = (
    ("torch_npu", NPU), ("triton.language.extra.cann", NPU), ("triton.language.extra.ascend", NPU),
    ("aiter", AMD), ("triton.language.extra.hip", AMD), ("triton.backends.amd", AMD),
    ("triton.language.extra.mlu", "mlu"), ("torch_mlu", "mlu"), ("torch_musa", "musa"),
    ("intel_extension_for_pytorch", "xpu"), ("triton.language.extra.intel", "xpu"), ("torch_gcu", "gcu"),
    ("triton.language.extra.cuda", NVIDIA), ("triton.backends.nvidia", NVIDIA),
)


def _word_target(word: str, table: dict[str, str]) -> str | None:
    word = word.lower()
    if _GFX.match(word):
        return AMD
    return table.get(word)


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[^0-9A-Za-z]+", name) if w]


def path_target(path: str, root: PurePath | None = None) -> str | None:
    """The target a file's location names (innermost part first), or None."""
    p = PurePath(path)
    if root is not None:
        try:
            p = p.relative_to(root)
        except ValueError:
            pass
    parts = list(p.parts)
    if not parts:
        return None
    stem = PurePath(parts[-1]).stem
    candidates = [(stem, False)] + [(part, True) for part in reversed(parts[:-1])]
    for part, is_folder in candidates[:8]:
        if is_folder:
            bare = part.lower().lstrip("_")
            if bare in _FOLDER_ONLY:
                return _FOLDER_ONLY[bare]
        for word in _words(part):
            found = _word_target(word, _WORDS)
            if found:
                return found
    return None


def import_target(tree: ast.Module | None) -> str | None:
    """The target named by an unguarded module-level import, or None."""
    if tree is None:
        return None
    for stmt in tree.body:
        modules: list[str] = []
        if isinstance(stmt, ast.Import):
            modules = [a.name for a in stmt.names]
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            modules = [stmt.module] + [f"{stmt.module}.{a.name}" for a in stmt.names]
        for module in modules:
            for prefix, target in _IMPORTS:
                if module == prefix or module.startswith(prefix + "."):
                    return target
    return None


def _flag_target(node: ast.AST) -> str | None:
    """The target a predicate names when true: `_is_hip`, `IS_NPU`, `is_rocm()`,
    `current_platform.is_xpu()`, `torch.version.hip`, `backend == "hip"`."""
    if isinstance(node, ast.Call):
        return _flag_target(node.func) if not node.args else None
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.Is)):
        for side in (node.left, node.comparators[0]):
            if isinstance(side, ast.Constant) and isinstance(side.value, str):
                return _word_target(side.value.strip(), _WORDS) or (NVIDIA if side.value.lower() == "cuda" else None)
        return None
    if isinstance(node, ast.Attribute):
        if dotted(node.value) == "torch.version":
            return {"hip": AMD, "cuda": NVIDIA}.get(node.attr)
        if node.attr == "is_cuda":
            return None   # a tensor's device, true on ROCm as well
        name = node.attr
    elif isinstance(node, ast.Name):
        name = node.id
    else:
        return None
    words = [w.lower() for w in name.split("_") if w]
    if words and words[0] in _FLAG_PREFIXES:
        words = words[1:]
    if not words or "alike" in words or "available" in words:
        return None
    return _word_target(words[0], _FLAG_WORDS)


def _branch_target(test: ast.expr, in_body: bool) -> str | None:
    """The target code in the body (`in_body`) or the else of `if test:` runs on, when the test says."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _branch_target(test.operand, not in_body)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.NotEq, ast.IsNot)):
        flipped = ast.Compare(left=test.left, ops=[ast.Eq()], comparators=test.comparators)
        return _branch_target(flipped, not in_body)
    if not in_body:
        return None
    if isinstance(test, ast.BoolOp):
        found = {_branch_target(v, True) for v in test.values} - {None}
        if isinstance(test.op, ast.And):
            return found.pop() if len(found) == 1 else None
        named = [_branch_target(v, True) for v in test.values]
        return named[0] if named and all(t == named[0] for t in named) else None
    return _flag_target(test)


def _function_target(name: str) -> str | None:
    for word in _words(name):
        found = _word_target(word, _WORDS)
        if found:
            return found
    return None


class Targets:
    """`ctx.target`: the target of the file and of any node in it."""

    def __init__(self, ctx: "PythonContext"):
        self.ctx = ctx
        self._file: tuple[str | None] | None = None

    @property
    def file(self) -> str | None:
        """The file's target from its path, imports or the `target` setting; None when unknown."""
        if self._file is None:
            settings = self.ctx.settings
            root = getattr(settings, "root", None)
            found = path_target(self.ctx.source.path, PurePath(root) if root else None)
            found = found or import_target(self.ctx.source.tree)
            if found is None:
                setting = getattr(settings, "target", "auto") or "auto"
                found = None if setting == "auto" else setting
            self._file = (found,)
        return self._file[0]

    def of(self, node: ast.AST) -> str | None:
        """The target `node` is compiled for: its branch, its enclosing function's name, else the file's."""
        child = node
        for anc in self.ctx.ancestors(node):
            if isinstance(anc, (ast.If, ast.IfExp)):
                body = anc.body if isinstance(anc.body, list) else [anc.body]
                orelse = anc.orelse if isinstance(anc.orelse, list) else [anc.orelse]
                if any(child is s for s in body):
                    found = _branch_target(anc.test, True)
                elif any(child is s for s in orelse):
                    found = _branch_target(anc.test, False)
                else:
                    found = None
                if found:
                    return found
            elif isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found = _function_target(anc.name)
                if found:
                    return found
            child = anc
        return self.file

    def nvidia(self, node: ast.AST) -> bool:
        """Whether NVIDIA premises may be applied at `node`: its target is NVIDIA or unknown."""
        return self.of(node) in (None, NVIDIA)

    def upstream(self, node: ast.AST) -> bool:
        """Whether upstream Triton's language limits apply at `node`: its target is NVIDIA, AMD or
        unknown (not a vendor fork such as Cambricon's, Ascend's or Kunlunxin's)."""
        return self.of(node) in UPSTREAM
