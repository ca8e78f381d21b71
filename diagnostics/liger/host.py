"""Recognise, in PyTorch host code, the places where a Liger-Kernel module or patch applies.

Static only: the user's file is parsed, never imported, and liger is never imported either.
The interesting one is "cross-entropy of an lm_head projection": the logits tensor may be built
a few statements earlier, reshaped, shifted and cast, so `lm_head_projection` follows one local
assignment and peels the wrappers a training loop typically puts around logits.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from tritonify.diagnostics.triton_ast import ImportMap, walk_nodes

# Wrappers that keep logits' meaning: reshapes, casts, the causal shift.
_RESHAPES = {"view", "reshape", "flatten"}
_CASTS = {"float", "contiguous", "to", "bfloat16", "half"}
MAX_HOPS = 3   # local assignments followed back from the loss to the projection


@dataclass
class Projection:
    """`hidden @ weight.T (+ bias)` found under a cross-entropy's input."""

    hidden: ast.expr
    weight: str             # source text of the [vocab, hidden] weight
    bias: str | None        # source text of the bias, or None
    label: str = ""         # how the message names it: "the `self.lm_head` projection"
    shift: ast.Subscript | None = None    # logits[..., :-1, :] applied before the loss
    reshaped: bool = False                # logits were flattened to 2-D before the loss


def _peel(expr: ast.expr, proj: dict) -> ast.expr:
    """Strip reshapes, casts and one shift subscript; note what was stripped."""
    while True:
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _RESHAPES | _CASTS:
            if expr.func.attr in _RESHAPES:
                proj["reshaped"] = True
            expr = expr.func.value
        elif isinstance(expr, ast.Subscript) and proj.get("shift") is None and not isinstance(expr.slice, ast.Constant):
            proj["shift"] = expr
            expr = expr.value
        else:
            return expr


def _last_assignment(fn: ast.AST | None, name: str, before_line: int) -> ast.Assign | None:
    if fn is None:
        return None
    best = None
    for node in walk_nodes(fn):
        if isinstance(node, ast.Assign) and node.lineno < before_line and len(node.targets) == 1:
            t = node.targets[0]
            if isinstance(t, ast.Name) and t.id == name and (best is None or node.lineno > best.lineno):
                best = node
    return best


def _segment(source_text: str, node: ast.AST) -> str:
    return ast.get_source_segment(source_text, node) or ast.unparse(node)


def _as_projection(expr: ast.expr, imports: ImportMap, text: str) -> tuple[ast.expr, str, str | None] | None:
    """(hidden, weight, bias) when expr is lm_head(h), F.linear(h, W, b) or h @ W.T."""
    if isinstance(expr, ast.Call) and expr.args:
        func = expr.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name == "lm_head" and len(expr.args) == 1 and not expr.keywords:
            head = _segment(text, func)
            return expr.args[0], f"{head}.weight", f"{head}.bias"
        path = imports.resolve(func) or ""
        if path == "torch.nn.functional.linear" and len(expr.args) >= 2:
            bias = expr.args[2] if len(expr.args) > 2 else next((k.value for k in expr.keywords if k.arg == "bias"), None)
            return expr.args[0], _segment(text, expr.args[1]), _segment(text, bias) if bias is not None else None
        if path in ("torch.matmul", "torch.mm") and len(expr.args) == 2:
            return _matmul(expr.args[0], expr.args[1], text)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.MatMult):
        return _matmul(expr.left, expr.right, text)
    return None


def _matmul(h: ast.expr, w: ast.expr, text: str) -> tuple[ast.expr, str, None] | None:
    if isinstance(w, ast.Attribute) and w.attr == "T":
        return h, _segment(text, w.value), None
    if isinstance(w, ast.Call) and isinstance(w.func, ast.Attribute) and w.func.attr == "t" and not w.args:
        return h, _segment(text, w.func.value), None
    return None   # h @ W with W laid out [hidden, vocab]: not the [vocab, hidden] weight Liger takes


def lm_head_projection(arg: ast.expr, fn: ast.AST | None, call_line: int, imports: ImportMap, text: str) -> Projection | None:
    """The projection whose output a cross-entropy consumes, if it is one."""
    seen: dict = {}
    expr = _peel(arg, seen)
    line = call_line
    for _ in range(MAX_HOPS):   # logits = lm_head(h); shift_logits = logits[..., :-1, :]; loss(shift_logits...)
        if not isinstance(expr, ast.Name):
            break
        assign = _last_assignment(fn, expr.id, line)
        if assign is None:
            return None
        line = assign.lineno
        expr = _peel(assign.value, seen)
    found = _as_projection(expr, imports, text)
    if found is None:
        return None
    hidden, weight, bias = found
    label = f"the `{weight[:-len('.weight')]}` projection" if weight.endswith("lm_head.weight") else f"a projection by `{weight}`"
    return Projection(hidden, weight, bias, label, seen.get("shift"), bool(seen.get("reshaped")))


def is_cross_entropy_call(call: ast.Call, imports: ImportMap, loss_objects: set[str]) -> bool:
    """F.cross_entropy(...), nn.CrossEntropyLoss()(...), or a call of a name/attribute bound to a
    CrossEntropyLoss instance in this file."""
    path = imports.resolve(call.func) or ""
    if path == "torch.nn.functional.cross_entropy":
        return True
    if isinstance(call.func, ast.Call) and (imports.resolve(call.func.func) or "") == "torch.nn.CrossEntropyLoss":
        return True
    return bool(loss_objects) and ast.unparse(call.func) in loss_objects  # unparse only when it can match


def cross_entropy_objects(tree: ast.Module, imports: ImportMap, nodes: list[ast.AST] | None = None) -> set[str]:
    """Source texts (`loss_fct`, `self.loss_fn`) bound to a torch.nn.CrossEntropyLoss()."""
    out = set()
    for node in (nodes if nodes is not None else walk_nodes(tree)):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and (imports.resolve(node.value.func) or "") == "torch.nn.CrossEntropyLoss"):
            out.update(ast.unparse(t) for t in node.targets)
    return out
