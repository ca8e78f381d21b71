"""TRI040 window-autotune-key: a sliding-window kernel (convolution, pooling) whose autotune key names
the input's spatial size but neither the stride nor the output's size.

The kernel takes a stride and a padding (``stride_h``/``stride_height``/``stride``... and
``pad_h``/``padding``...: a window op, whose output size is (in + 2 pad - kernel) / stride + 1), its
``@triton.autotune`` key is a literal list that holds an input spatial size (``in_h``, ``input_height``,
``H``, ``IH``...) and holds no stride and no output size (``out_h``, ``output_height``, ``OH``...).
Then every call with the same input size shares one tuned config whatever its stride: a 56x56 input
at stride 1 (3,136 output pixels per image) and at stride 2 (784) get the tile picked for whichever
ran first, and the autotune cache (keyed on the key's values and the tensors' dtypes, not on
constexpr arguments) cannot tell them apart.

Quiet where the key is not a literal list of names, where it holds a stride or an output size, and
where the kernel has no padding parameter (``stride_h`` alone is often a memory stride, e.g. of heads).
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Finding, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._autotune_call import autotune_arg, resolve_list

RULE = Rule(
    code="TRI040",
    name="window-autotune-key",
    summary="conv/pool autotune key names the input size but not the stride or the output size",
    severity=Severity.WARNING,
    # Opt-in: no finding on the real-world corpus to measure it by (benchmarks/realworld/labels/round3_conv.csv)
    default=False,
)

_AXIS = r"(h|w|d|height|width|depth|x|y)"
STRIDE = re.compile(rf"^(conv_)?strides?(_?{_AXIS})?$", re.I)
PADDING = re.compile(rf"^(pad|pads|padding)(_?{_AXIS})?$", re.I)
INPUT_SIZE = re.compile(rf"^((in|input|inp)_?{_AXIS}|[HWD]|I[HWD]|[HWD]_?in)$", re.I)
OUTPUT_SIZE = re.compile(rf"^((out|output)_?{_AXIS}|O[HWD]|[HWD]_?out)$", re.I)


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        if kernel.autotune is None:
            continue
        params = [a.arg for a in kernel.node.args.args]
        if not any(STRIDE.match(p) for p in params) or not any(PADDING.match(p) for p in params):
            continue
        written = autotune_arg(kernel.autotune, 1, "key")
        key = resolve_list(ctx, written)
        if not isinstance(key, (ast.List, ast.Tuple)) or not all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in key.elts):
            continue
        names = [e.value for e in key.elts]
        inputs = [n for n in names if INPUT_SIZE.match(n)]
        if not inputs or any(STRIDE.match(n) or OUTPUT_SIZE.match(n) for n in names):
            continue
        strides = [p for p in params if STRIDE.match(p)]
        outputs = [p for p in params if OUTPUT_SIZE.match(p)]
        want = ", ".join(f"`{n}`" for n in (outputs + strides)) or "the output size and the stride"
        yield ctx.finding(
            written,
            f"autotune key names the input size ({', '.join(f'`{n}`' for n in inputs)}) but not the stride or the "
            "output size: layers with the same input and another stride (56x56 at stride 1: 3,136 output pixels, at "
            f"stride 2: 784) share one tuned config; key on {want}")
