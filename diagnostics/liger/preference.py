"""Recognise hand-written preference-optimisation and policy-gradient losses in host PyTorch code.

Liger-Kernel's `chunked_loss` package ships DPO, ORPO, CPO, SimPO and GRPO losses fused with the
lm_head projection: the (tokens x vocab) logits are never materialised. Here we find the PyTorch
code those losses replace, by the shape of the formula and never by a function's name:

* DPO: `F.logsigmoid(beta * ((pc - rc) - (pr - rr)))` (or `torch.log(torch.sigmoid(...))`), a scaled difference of two log-ratios
  (four log-prob terms), where the names may be bound a few statements earlier;
* ORPO: `F.logsigmoid(...)` of a log-odds ratio, recognised by its `log1p(-exp(logp))` terms;
* CPO / SimPO: `F.logsigmoid(beta * (chosen - rejected [- gamma]))`, one difference;
* GRPO: `torch.min(r * A, torch.clamp(r, 1 - eps, 1 + eps) * A)` with
  `r = torch.exp(logp - old_logp)` and A one advantage per sequence broadcast over its tokens
  (`A.unsqueeze(1)`): Liger's GRPO loss takes advantages of shape (batch,), so PPO with per-token
  advantages is left alone.

`beta` must be spelled `beta` (or `self.beta`, `args.dpo_beta` ...): every public
implementation (TRL, OpenRLHF, the papers' code, Liger itself) does, and a logsigmoid of a scaled
difference without it is too generic (a Bradley-Terry reward-model loss has no beta). The
caller also requires per-token log-probs taken from logits in the same file (`log_softmax` or
`logsumexp` with `gather`, or TRL's `selective_log_softmax`): without them the loss is not one
over a language model's tokens and the fused-linear versions do not apply.
"""
from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from tritonify.diagnostics.triton_ast import ImportMap

MAX_HOPS = 4                 # local assignments followed back from the loss call
LOGSIGMOID = "torch.nn.functional.logsigmoid"
SIGMOIDS = {"torch.sigmoid", "torch.nn.functional.sigmoid"}
LOSS_CALLS = {LOGSIGMOID, "torch.log"}          # where a preference loss's logsigmoid is spelled
MIN_CALLS = {"torch.min", "torch.minimum"}
CLAMP_CALLS = {"torch.clamp", "torch.clip"}
TOKEN_LOGP_CALLS = {"log_softmax", "logsumexp"}   # method or torch/F function
SELECTIVE = "selective_log_softmax"               # TRL's gather-of-log-softmax helper
_CASTS = {"float", "double", "to", "contiguous", "squeeze", "unsqueeze", "detach"}


@dataclass(frozen=True)
class LossMatch:
    kind: str            # "dpo", "orpo", "cpo_simpo", "grpo"
    node: ast.Call       # the call the finding points at


Resolve = Callable[[ast.expr, int], ast.expr | None]


def local_resolver(fn_nodes: list[ast.AST]) -> Resolve:
    """name -> the value of its last single-target assignment before a line, within one function."""
    assigns: dict[str, list[tuple[int, ast.expr]]] = {}
    for node in fn_nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigns.setdefault(node.targets[0].id, []).append((node.lineno, node.value))

    def resolve(expr: ast.expr, line: int) -> ast.expr | None:
        if not isinstance(expr, ast.Name):
            return None
        best = None
        for lineno, value in assigns.get(expr.id, ()):
            if lineno < line and (best is None or lineno > best[0]):
                best = (lineno, value)
        return best[1] if best else None

    return resolve


class _Shape:
    """Structural questions about one expression, looking through local names and casts."""

    def __init__(self, imports: ImportMap, resolve: Resolve, line: int):
        self.imports = imports
        self.resolve = resolve
        self.line = line

    def value(self, expr: ast.expr) -> ast.expr:
        """expr with names replaced by their assigned values (up to MAX_HOPS), unary minus, casts
        and `.mean(-1)`-style wrappers peeled."""
        for _ in range(MAX_HOPS + 4):
            if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
                expr = expr.operand
            elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _CASTS:
                expr = expr.func.value
            elif isinstance(expr, ast.Name):
                # the last assignment before the line this name is read on, so that
                # `r = torch.clamp(r, ...)` reads the earlier r
                found = self.resolve(expr, getattr(expr, "lineno", self.line))
                if found is None:
                    return expr
                expr = found
            else:
                return expr
        return expr

    def path(self, call: ast.expr) -> str:
        return (self.imports.resolve(call.func) or "") if isinstance(call, ast.Call) else ""

    def is_exp(self, expr: ast.expr) -> ast.expr | None:
        """The argument of torch.exp(x) / x.exp(), else None."""
        if not isinstance(expr, ast.Call):
            return None
        if self.path(expr) == "torch.exp" and len(expr.args) == 1:
            return expr.args[0]
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "exp" and not expr.args:
            return expr.func.value
        return None

    def difference(self, expr: ast.expr) -> tuple[ast.expr, ast.expr] | None:
        """(a, b) when expr is a - b, looked through names and a clamp of the difference
        (`torch.clamp(logp - old, -20, 20)` keeps its meaning)."""
        v = self.value(expr)
        if isinstance(v, ast.Call):
            if self.path(v) in CLAMP_CALLS and v.args:
                v = self.value(v.args[0])
            elif isinstance(v.func, ast.Attribute) and v.func.attr in ("clamp", "clip"):
                v = self.value(v.func.value)
        if isinstance(v, ast.BinOp) and isinstance(v.op, ast.Sub):
            return v.left, v.right
        return None

    def scaled_by_beta(self, expr: ast.expr) -> ast.expr | None:
        """X of `beta * X` / `X * beta` (beta spelled as such), else None."""
        v = self.value(expr)
        if not (isinstance(v, ast.BinOp) and isinstance(v.op, ast.Mult)):
            return None
        for factor, other in ((v.left, v.right), (v.right, v.left)):
            if _is_beta(factor):
                return other
        return None

    def has_log_odds(self, expr: ast.expr) -> bool:
        """expr contains log1p(-exp(x)) twice: ORPO's log(1 - p) terms (log-odds of a log-prob)."""
        count = 0
        stack, seen = [expr], 0
        while stack and seen < 200:
            node = self.value(stack.pop())
            seen += 1
            if isinstance(node, ast.Call) and self.path(node) == "torch.log1p" and len(node.args) == 1:
                arg = node.args[0]
                if isinstance(arg, ast.UnaryOp) and isinstance(arg.op, ast.USub) and self.is_exp(self.value(arg.operand)) is not None:
                    count += 1
                    continue
            stack.extend(c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr))
        return count >= 2


def _is_beta(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name == "beta" or name.endswith("_beta")


def _logsigmoid_argument(call: ast.Call, shape: _Shape) -> ast.expr | None:
    """x of F.logsigmoid(x), or of torch.log(torch.sigmoid(x)) (also F.sigmoid, x.sigmoid())."""
    path = shape.path(call)
    if len(call.args) != 1:
        return None
    if path == LOGSIGMOID:
        return call.args[0]
    if path != "torch.log":
        return None
    inner = shape.value(call.args[0])
    if not isinstance(inner, ast.Call):
        return None
    if shape.path(inner) in SIGMOIDS and len(inner.args) == 1:
        return inner.args[0]
    if isinstance(inner.func, ast.Attribute) and inner.func.attr == "sigmoid" and not inner.args:
        return inner.func.value
    return None


def preference_loss(call: ast.Call, imports: ImportMap, resolve: Resolve) -> LossMatch | None:
    """DPO / ORPO / CPO-SimPO when `call` is F.logsigmoid (or log of sigmoid) of their margin."""
    shape = _Shape(imports, resolve, call.lineno)
    arg = _logsigmoid_argument(call, shape)
    if arg is None:
        return None
    if shape.has_log_odds(arg):
        return LossMatch("orpo", call)
    margin = shape.scaled_by_beta(arg)
    if margin is None:
        return None
    outer = shape.difference(margin)
    if outer is None:
        return None
    left, right = outer
    if shape.difference(left) is not None and shape.difference(right) is not None:
        return LossMatch("dpo", call)       # (policy - reference) log-ratios of chosen vs rejected
    return LossMatch("cpo_simpo", call)


def policy_clip_loss(call: ast.Call, imports: ImportMap, resolve: Resolve) -> LossMatch | None:
    """torch.min(r * A, clamp(r, lo, hi) * A) with r = exp(logp - old_logp)."""
    if (imports.resolve(call.func) or "") not in MIN_CALLS or len(call.args) != 2:
        return None
    shape = _Shape(imports, resolve, call.lineno)
    a, b = (shape.value(x) for x in call.args)
    for plain, clipped in ((a, b), (b, a)):
        ratio = _clamped_ratio(shape, clipped)
        if ratio is None or not (isinstance(plain, ast.BinOp) and isinstance(plain.op, ast.Mult)):
            continue
        factors = (plain.left, plain.right)
        ratio_value = ast.dump(shape.value(ratio))
        same = [f for f in factors if ast.dump(shape.value(f)) == ratio_value]
        if not same:
            continue
        advantage = factors[1] if same[0] is factors[0] else factors[0]
        exp_arg = shape.is_exp(shape.value(ratio))
        if exp_arg is not None and shape.difference(exp_arg) is not None and _per_sequence(advantage, shape):
            return LossMatch("grpo", call)
    return None


def _per_sequence(adv: ast.expr, shape: _Shape) -> bool:
    """The advantage is one value per sequence broadcast over its tokens (`A.unsqueeze(1)`,
    `A[:, None]`, `A.view(-1, 1)`), here or where the name was last assigned. Liger's GRPO loss
    takes advantages of shape (batch,); PPO with per-token (GAE) advantages is not it."""
    for _ in range(MAX_HOPS):
        if isinstance(adv, ast.UnaryOp):
            adv = adv.operand
        if isinstance(adv, ast.Call) and isinstance(adv.func, ast.Attribute):
            if adv.func.attr == "unsqueeze" and adv.args and isinstance(adv.args[0], (ast.Constant, ast.UnaryOp)):
                return True
            if adv.func.attr in ("view", "reshape") and len(adv.args) == 2 and ast.unparse(adv.args[1]) == "1":
                return True
        if isinstance(adv, ast.Subscript) and isinstance(adv.slice, ast.Tuple):
            if any(isinstance(e, ast.Constant) and e.value is None for e in adv.slice.elts):
                return True
        if not isinstance(adv, ast.Name):
            return False
        found = shape.resolve(adv, adv.lineno)
        if found is None:
            return False
        adv = found
    return False


def _clamped_ratio(shape: _Shape, expr: ast.expr) -> ast.expr | None:
    """r of `clamp(r, lo, hi) * A`."""
    if not (isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult)):
        return None
    for factor in (expr.left, expr.right):
        f = shape.value(factor)
        if isinstance(f, ast.Call):
            if shape.path(f) in CLAMP_CALLS and len(f.args) + len(f.keywords) >= 3 and f.args:
                return f.args[0]
            if isinstance(f.func, ast.Attribute) and f.func.attr in ("clamp", "clip") and len(f.args) + len(f.keywords) >= 2:
                return f.func.value
    return None


def token_logp_evidence(call: ast.Call, imports: ImportMap) -> str | None:
    """'logp' for a log_softmax/logsumexp call, 'gather' for a gather, 'both' for TRL's
    selective_log_softmax: the pieces of per-token log-probs taken from logits."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name == SELECTIVE:
        return "both"
    if name in TOKEN_LOGP_CALLS:
        return "logp"
    if name == "gather" or (imports.resolve(func) or "") == "torch.gather":
        return "gather"
    return None
