"""TRI064 rank-mismatch: block ranks that Triton cannot combine, whatever the block sizes are.

Split out of TRI021 (whose size verdicts stay opt-in) for the default set: a rank follows from the
code alone (`tl.arange` is 1-D, `x[:, None]` adds an axis, `tl.zeros((M, N))` is 2-D, a reduction
drops its axis), never from the values of the block sizes, so these verdicts are certain where the
shapes are known at all (the same inference, `_shapes.KernelShapes`, flow-sensitive: a name
rebound by `tl.reshape` or `tl.sum` has the rank of the binding that reaches the use):

* a `tl.store` value or mask of higher rank than its pointer block ("Expected pointer argument to
  have shape ..."): a 2-D accumulator stored through 1-D offsets;
* a `tl.dot` operand that is not 2-D (or both 3-D) where the other operand is a block (the rank-0
  and 1-D cases are TRI028's);
* a reduction axis past the rank (`tl.sum(x, axis=1)` on a 1-D `x`: "invalid axis 1");
* a permutation that does not name every axis (`a.trans(1)` on a 2-D `a`: "permute dims must have
  the same length as input shape").

Vendor forks of Triton (`backend/_ascend/`, ...) are not judged, as for the other compile breaks.
"""
from __future__ import annotations

from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._types import typed_kernels
from tritonify.diagnostics.rules.triton.tri021_shape_mismatch import shape_findings

RULE = Rule(
    code="TRI064",
    name="rank-mismatch",
    summary="block ranks that cannot combine (store value vs pointer block, tl.dot, reduction axis, permute)",
    severity=Severity.ERROR,
    fixable=False,
    # Precision: on the real-world corpus (2,854 files) it gives no finding (the five rank findings of
    # TRI021 in round 2 were first-binding reads, since made flow-sensitive); on the freshcode ground
    # truth every one of its findings is in a program Triton rejected.
    compile_break=True,
    # Opt-in for its cost, not its precision: its rank verdicts need the shape inference where the type
    # inference leaves a rank open (stores and tl.dot operands, mostly), which took the default set's
    # corpus lint from 16.8 to 21.6 s (first pass 2.96x -> 3.50x ast.parse, slowest file 126 -> 169 ms;
    # benchmarks/realworld/lint_speed.py, 2026-12-02 15:36-15:40 UTC, load 0.6), past the speed target.
    default=False,
    opt_in_because=("its precision would admit it, its cost does not: with it the default set's corpus lint "
                    "took 3.50x `ast.parse` on a first pass (2.96x without; slowest file 169 ms), past the "
                    "speed target of 3x"),
)


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel, _types in typed_kernels(ctx):
        yield from shape_findings(ctx, kernel, ranks=True, sizes=False)
