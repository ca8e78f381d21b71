"""TRI010 exp-in-online-softmax: `tl.exp` on the scores of an attention loop, where
`tl.exp2` with log2(e) folded into the existing scale saves a multiply per element.

Only where the multiply costs: in an attention loop (one that computes `tl.dot`), an exp whose
argument carries the scores elementwise (`tl.exp(qk - m[:, None])`). Not the per-row rescale
`tl.exp(m_old - m_new)` (the max went through a reduction), not a decay gate computed from loads,
not an exp whose `if` has an exp2 branch beside it (a deliberate choice), and not an online
softmax without `tl.dot` (a streaming loop over logits: memory-bound, the multiply is hidden),
and not a decode or split-KV kernel (its name says `decode`, or a parameter names the splits:
a few query rows against a long KV, memory-bound too).
Only where the code targets NVIDIA or an unknown target (`ctx.target`): the `ex2.approx`
lowering is NVIDIA's.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._exp_calls import is_natural_tl_exp
from tritonify.diagnostics.rules.triton._kernel_flow import enclosing_loops, is_tl_call
from tritonify.diagnostics.rules.triton._tile_values import derived_from, reads_elementwise
from tritonify.diagnostics.triton_ast import TL, walk_nodes

RULE = Rule(
    code="TRI010",
    name="exp-in-online-softmax",
    summary="tl.exp on attention scores in a tl.dot loop (tl.exp2 with log2(e) folded into the scale is faster)",
    severity=Severity.INFO,
    fixable=True, safe_fix=False,
    # Opt-in: 4 of 8 findings were true positives in round 2 of the real-world study
    # (benchmarks/realworld/labels/round2_*.csv), under the 90% the default set requires.
    default=False,
)

LOG2E = "1.44269504"
# Operators that bind less tightly than `*`: `E * c` needs parentheses around them.
_LOOSER = (ast.Add, ast.Sub, ast.LShift, ast.RShift, ast.BitOr, ast.BitXor, ast.BitAnd, ast.MatMult)


def _computes_dot(ctx: PythonContext, loop: ast.stmt) -> bool:
    """The loop calls tl.dot (asked once per loop: a loop often holds several exps)."""
    return ctx.per_file(("tri010-loop", loop), lambda: any(is_tl_call(ctx, n, "dot") for n in walk_nodes(loop)))


def _on_scores(ctx: PythonContext, kernel, exp_call: ast.Call) -> bool:
    """The exp's argument carries the `tl.dot` results elementwise (not through a reduction)."""
    def is_dot(n: ast.AST) -> bool:
        return is_tl_call(ctx, n, "dot")
    scores = ctx.per_file(("tri010-scores", kernel.node), lambda: derived_from(ctx, kernel, is_dot))
    return reads_elementwise(ctx, exp_call.args[0], is_dot, scores)


def _memory_bound_decode(kernel) -> bool:
    """A decode or split-KV kernel: the kernel's name says `decode`, or a parameter names the
    splits (`NUM_KV_SPLITS`, `num_splits`, `N_SPLITS`, `MAX_SPLITS`). A few query rows against a
    long KV: the loop streams K/V from memory and one multiply per score is not measurable
    (round 2 of the real-world study labelled all four such findings NOISE)."""
    return "decode" in kernel.name.lower() or any("split" in p.name.lower() for p in kernel.params)


def _exp2_alternative(ctx: PythonContext, call: ast.Call, kernel_node: ast.AST) -> bool:
    """The exp sits in one branch of an `if` whose other branch already uses exp2 (`if USE_EXP2:
    ... exp2 ... else: ... exp ...`): the author chose between them on purpose."""
    child = call
    for anc in ctx.ancestors(call):
        if anc is kernel_node:
            return False
        if isinstance(anc, ast.If) and child is not anc.test:
            other = anc.orelse if any(child is st for st in anc.body) else anc.body
            if any(is_tl_call(ctx, n, "exp2", "math.exp2") for st in other for n in walk_nodes(st)):
                return True
        child = anc
    return False


def _exp2_callee(ctx: PythonContext, func: ast.expr) -> str | None:
    """`tl.exp2` for `tl.exp`, `tl.math.exp2` for `tl.math.exp`; for a bare `exp` imported from
    triton.language, the module alias if there is one."""
    if isinstance(func, ast.Attribute):
        return f"{ctx.segment(func.value)}.{func.attr}2"
    aliases = sorted(ctx.imports.aliases_of(TL))
    if aliases:
        return f"{'tl' if 'tl' in aliases else aliases[0]}.exp2"
    exp2 = [n for n, p in ctx.imports.names.items() if p == f"{TL}.exp2"]
    return exp2[0] if exp2 else None


def _scaled(ctx: PythonContext, arg: ast.expr) -> str:
    text = ctx.segment(arg)
    loose = (isinstance(arg, ast.BinOp) and isinstance(arg.op, _LOOSER)) or isinstance(
        arg, (ast.Compare, ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)
    )
    return f"({text}) * {LOG2E}" if loose else f"{text} * {LOG2E}"


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        if _memory_bound_decode(kernel):
            continue
        for call in kernel.calls():
            if not is_natural_tl_exp(ctx, call):
                continue
            loops = enclosing_loops(ctx, call, kernel.node)
            if not loops or not _computes_dot(ctx, loops[0]) or not _on_scores(ctx, kernel, call):
                continue
            if not ctx.target.nvidia(call) or _exp2_alternative(ctx, call, kernel.node):
                continue
            message = (
                f"`tl.exp` in an attention loop (tl.dot) lowers to a multiply by log2(e) plus `ex2`; call "
                f"`tl.exp2` and fold {LOG2E} into the scale you already apply after `tl.dot` "
                f"(`qk_scale = sm_scale * {LOG2E}`, running max in the same base): 5-8% faster on an H200"
            )
            callee = _exp2_callee(ctx, call.func)
            fixes = [Fix(
                title=f"Rewrite as exp2(E * {LOG2E}) (same value up to rounding; then fold the constant into the scale)",
                edits=(ctx.replace(call, f"{callee}({_scaled(ctx, call.args[0])})"),),
                applicability=Applicability.UNSAFE,
            )] if callee else []
            yield ctx.finding(call, message, fixes)
