"""The shape recursion's memo (`_recursion_memo`) changes nothing and keeps the work linear.

Exactness: every expression of kernels built to hit the depth limit gets the same shape, in
every scenario, with the memo as without it (KernelSizes for TRI004/005/014, KernelShapes for
TRI021).
Linearity: the number of expansions the memo runs, counted (not timed), grows no faster than
the kernel when the kernel doubles; without the memo a chain of locals that each read the two
before was expanded once per path (exponential)."""
from __future__ import annotations

import ast

import pytest

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.rules.triton._shapes import KernelShapes
from tritonify.diagnostics.rules.triton._static_sizes import KernelSizes
from tritonify.diagnostics.source import SourceFile

class _SizesNoMemo(KernelSizes):
    def _shape(self, expr, sc, depth, seen):
        return self._compute_shape(expr, sc, depth, seen)


class _ShapesNoMemo(KernelShapes):
    def _shape(self, expr, sc, depth, seen):
        return self._compute_shape(expr, sc, depth, seen)


def _ctx(text: str) -> PythonContext:
    source = SourceFile.from_text(text, "k.py")
    assert source.tree is not None
    return PythonContext(source)


def _expressions(kernel) -> list[ast.AST]:
    return [n for n in kernel.nodes if isinstance(n, ast.expr)]


def _all_shapes(cls, ctx: PythonContext, kernel, scenarios: str) -> list:
    sizes = cls(ctx, kernel)
    scs = list(sizes.scenarios) + ([sizes.rank_scenario] if scenarios == "rank" else [])
    return [sizes.shape(e, sc) for sc in scs for e in _expressions(kernel)]


def _chain_kernel(blocks: int, length: int = 12, loop: bool = True) -> str:
    """A kernel with `blocks` chains of locals, each reading the two before it (and one loop
    that rebinds a local from another: a cycle)."""
    lines = ["import triton", "import triton.language as tl", "", "@triton.jit",
             "def k(x_ptr, y_ptr, BLOCK: tl.constexpr = 64):",
             "    pid = tl.program_id(0)",
             "    offs = pid * BLOCK + tl.arange(0, BLOCK)"]
    for b in range(blocks):
        lines.append(f"    a{b}_0 = tl.load(x_ptr + offs)")
        lines.append(f"    a{b}_1 = a{b}_0 * 2")
        for i in range(2, length):
            lines.append(f"    a{b}_{i} = a{b}_{i - 1} + a{b}_{i - 2}[:, None]" if i % 5 == 0
                         else f"    a{b}_{i} = a{b}_{i - 1} + a{b}_{i - 2}")
        if loop:
            lines.append("    for _ in range(4):")
            lines.append(f"        c{b} = a{b}_{length - 1} * 0.5")
            lines.append(f"        a{b}_{length - 1} = c{b} + 1.0")
        lines.append(f"    tl.store(y_ptr + offs, a{b}_{length - 1})")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("length", [6, 23, 26, pytest.param(40, marks=pytest.mark.slow)])
def test_memo_is_exact_at_the_depth_limit(length: int):
    # chains shorter and longer than the recursion limit (24): past it shapes are unknown. No
    # loop here: a loop-carried binding is skipped where it is already being followed (not a cut
    # to None), so on a cycle the memo's per-node answer is the definition, not the plain recursion
    # One chain: a second one, identical in shape, doubled the exponential no-memo reference's time.
    ctx = _ctx(_chain_kernel(1, length, loop=False))
    (kernel,) = ctx.kernels
    memo = _all_shapes(KernelShapes, ctx, kernel, "rank")
    assert memo == _all_shapes(_ShapesNoMemo, ctx, kernel, "rank")
    assert _all_shapes(KernelSizes, ctx, kernel, "") == _all_shapes(_SizesNoMemo, ctx, kernel, "")
    assert any(s is not None and len(s) == 2 for s in memo)  # the broadcast is seen at all


def _expansions(text: str) -> tuple[int, int]:
    ctx = _ctx(text)
    (kernel,) = ctx.kernels
    sizes = KernelShapes(ctx, kernel)
    scenarios = [*sizes.scenarios, sizes.rank_scenario]
    for sc in scenarios:
        for e in _expressions(kernel):
            sizes.shape(e, sc)
    return sizes._shapes.computed, len(_expressions(kernel)) * len(scenarios)


def test_expansions_grow_linearly_with_the_kernel():
    small, small_asked = _expansions(_chain_kernel(8))
    big, big_asked = _expansions(_chain_kernel(16))
    assert big_asked >= 1.9 * small_asked
    assert big <= 2.2 * small
    assert big <= 4 * big_asked  # a few expansions per expression and scenario, not one per path


def test_a_long_chain_is_expanded_once_per_expression():
    # 20 locals each reading the two before: without the memo the last one expands ~fib(20) paths
    computed, asked = _expansions(_chain_kernel(1, 20))
    assert computed <= 4 * asked
