"""TRI037 moe-expert-loop: host PyTorch that dispatches tokens to experts in a Python loop, one
expert (one matmul or expert module call per projection) per iteration.

The shape (Hugging Face's Mixtral/Qwen-MoE blocks, most hand-written MoE layers)::

    for e in range(num_experts):
        token, slot = torch.where(topk_ids == e)          # which tokens chose expert e
        y = expert[e](x[token]) * topk_weights[token, slot, None]
        out.index_add_(0, token, y)                        # scattered back

Each iteration is a data-dependent selection (``torch.where``/``nonzero``: a host synchronisation),
a gather, the expert's matmuls at whatever row count that expert got, and a scatter: E iterations of
small launches, the GPU idle between them. A fused MoE sorts the tokens by expert once and runs one
grouped GEMM per projection (``tritonify template moe``; the editor offers "Insert template" as a
quick fix on each finding, and as a refactoring inside any definition whose name mentions MoE).

Reported (information) when a ``for`` loop over experts (``range(...)`` or an ``experts`` container)
has in its body a selection that compares with the loop variable (``== e``, ``expert_mask[e]``) through
``torch.where``/``nonzero``/a boolean index, and a scatter back (``index_add``/``index_add_``/
``index_copy_``/``scatter_add``, or an indexed ``+=``). Not in tests, not in reference functions
(``*_reference``, ``naive_*``), not in files that import an inference engine (vLLM, SGLang ship
their own fused MoE).
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.liger.scope import advice_wanted, imports_inference_engine, in_spans, reference_spans
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule

RULE = Rule(
    code="TRI037",
    name="moe-expert-loop",
    summary="a Python loop over experts with one matmul each: a fused MoE (grouped GEMMs) replaces it",
    severity=Severity.INFO,
    language="python-host",
    fixable=False,
    template="moe",   # "Insert template" is offered as a quick fix on each finding
    # Opt-in: measured on the real-world corpus with TRI036 (references/rules/TRI037.md)
    default=False,
)

_SCATTERS = ("index_add", "index_add_", "index_copy_", "scatter_add", "scatter_add_", "index_put_")
_SELECTS = ("where", "nonzero", "argwhere")


def may_fire(text: str) -> bool:
    return "for " in text and any(s in text for s in _SCATTERS + ("+=",)) and (
        "where" in text or "nonzero" in text or "argwhere" in text)


def _loop_var(loop: ast.For) -> str | None:
    """The expert index (or module) the loop walks: ``for e in range(...)``, ``for e, m in
    enumerate(experts)``, ``for m in self.experts``."""
    target, it = loop.target, loop.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and isinstance(target, ast.Name):
        return target.id
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate" and it.args \
            and isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name) \
            and "expert" in ast.unparse(it.args[0]).lower():
        return target.elts[0].id
    return None


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _selects_by(loop: ast.For, var: str) -> bool:
    """``torch.where(ids == e)``, ``(ids == e).nonzero()``, ``torch.where(expert_mask[e])``."""
    for node in ast.walk(loop):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name not in _SELECTS:
            continue
        operands = list(node.args) + ([func.value] if isinstance(func, ast.Attribute) and name != "where" else [])
        if any(var in _names(a) for a in operands):
            return True
    return False


def _scatters(loop: ast.For) -> bool:
    for node in ast.walk(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SCATTERS:
            return True
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Subscript):
            return True
    return False


def _multiplies(loop: ast.For) -> bool:
    """A matmul or a call (an expert module, F.linear) in the body: something computes per expert."""
    for node in ast.walk(loop):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("matmul", "mm", "bmm", "linear", "addmm") or isinstance(func, ast.Subscript) \
                    or "expert" in name.lower():
                return True
    return False


def check(ctx: PythonContext) -> Iterator[Finding]:
    if not advice_wanted(ctx.source.path) or not may_fire(ctx.source.text) or imports_inference_engine(ctx.tree):
        return
    references = reference_spans(ctx.module_nodes)
    for node in ctx.module_nodes:
        if not isinstance(node, ast.For) or in_spans(node.lineno, references):
            continue
        var = _loop_var(node)
        if var is None or not (_selects_by(node, var) and _scatters(node) and _multiplies(node)):
            continue
        yield ctx.finding(
            node.iter,
            "a Python loop over experts (a selection, the expert's matmuls and a scatter per iteration, a host "
            "sync each time): a fused MoE sorts tokens by expert once and runs grouped GEMMs; SwiGLU experts with "
            "stacked weights: Liger's `LigerFusedMoEFunction.apply(x, gate_up_proj, down_proj, top_k_index, "
            "top_k_weights)`; other GLUs: `tritonify template moe` prints it (the editor's quick fix inserts it)")
