"""Lint work grows linearly with the file, counted (not timed): the Python function calls each
rule makes on a kernel twice as long, and on a file with twice as many kernels, are at most
about twice as many. A rule that re-walks the kernel for every access or follows every path
through a chain of locals grows faster (TRI005 took 4 s on an 813-line file; TRI007 grew 3.4x
when its kernel doubled)."""
from __future__ import annotations

import sys

import pytest

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.engine import _enabled_rules
from tritonify.diagnostics.settings import Settings
from tritonify.diagnostics.source import SourceFile

HEADER = ["import triton", "import triton.language as tl", ""]
MAX_GROWTH = 2.3  # per rule, when the input doubles (a constant part makes it less than 2)


def _kernel(name: str, blocks: int) -> list[str]:
    """A kernel of `blocks` steps, each reading the two before it: loads over a tiled offset,
    a float scalar, exp / max / sum, a dot, a loop rebinding a value, stores."""
    lines = [
        "@triton.autotune(configs=[triton.Config({'BLOCK': 64}), triton.Config({'BLOCK': 128})], key=['n'])",
        "@triton.jit",
        f"def {name}(x_ptr, w_ptr, y_ptr, n, scale, stride, BLOCK: tl.constexpr, K: tl.constexpr = 32):",
        "    pid = tl.program_id(0)",
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)",
        "    rk = tl.arange(0, K)",
        "    mask = offs < n",
        "    acc = tl.zeros((BLOCK, K), dtype=tl.float32)",
        "    p = tl.load(x_ptr + offs, mask=mask, other=0.0)",
        "    q = p * 2.0",
    ]
    prev, prev2 = "q", "p"
    for i in range(blocks):
        lines += [
            f"    x{i} = tl.load(x_ptr + offs * stride + {i}, mask=mask, other=0.0)",
            f"    y{i} = x{i} * scale + {prev} - {prev2}",
            f"    e{i} = tl.exp(y{i} - tl.max(y{i}, 0))",
            f"    u{i} = tl.exp(y{i})",
            f"    s{i} = tl.sum(e{i}, 0) + tl.sum(u{i}, 0)",
            f"    w{i} = tl.load(w_ptr + rk[:, None] * K + rk[None, :] + {i})",
            f"    a{i} = tl.load(x_ptr + offs[:, None] * K + rk[None, :])",
            f"    acc += tl.dot(a{i}, w{i})",
            "    for j in range(4):",
            f"        y{i} = y{i} * 0.5 + e{i} / s{i}",
            f"    tl.store(y_ptr + offs + {i}, y{i})",
        ]
        prev2, prev = prev, f"y{i}"
    lines.append("    tl.store(y_ptr + offs[:, None] * K + rk[None, :], acc)")
    return lines + [""]


def _launcher(names: list[str]) -> list[str]:
    lines = ["def run(x, w, y, n):"]
    lines += [f"    {name}[(n // 64,)](x, w, y, n, 0.5, 1)" for name in names]
    return lines + [""]


def _calls_per_stage(text: str) -> dict[str, int]:
    """Python (and C) function calls made by the shared setup and by each rule."""
    settings = Settings(select=("ALL",))
    counts: dict[str, int] = {}
    stage = ["setup"]

    def count(frame, event, arg):
        if event == "call" or event == "c_call":
            counts[stage[0]] = counts.get(stage[0], 0) + 1

    source = SourceFile.from_text(text, "k.py")
    ctx = PythonContext(source, settings=settings)
    old = sys.getprofile()
    sys.setprofile(count)
    try:
        _ = ctx.kernels, ctx.parents
        for reg in _enabled_rules(settings, "k.py", "python"):
            ctx.rule = reg.rule
            stage[0] = reg.code
            list(reg.check(ctx))
    finally:
        sys.setprofile(old)
    return counts


def _growth(small: str, big: str) -> dict[str, float]:
    a, b = _calls_per_stage(small), _calls_per_stage(big)
    return {stage: b.get(stage, 0) / max(1, a.get(stage, 0)) for stage in b}


def _assert_linear(growth: dict[str, float]) -> None:
    fast = {stage: round(g, 2) for stage, g in growth.items() if g > MAX_GROWTH}
    assert fast == {}, f"work grew faster than the input (doubled): {fast}"


@pytest.mark.parametrize("blocks", [8])
def test_work_per_rule_grows_linearly_with_the_kernel(blocks: int):
    small = "\n".join(HEADER + _kernel("k", blocks) + _launcher(["k"]))
    big = "\n".join(HEADER + _kernel("k", 2 * blocks) + _launcher(["k"]))
    _assert_linear(_growth(small, big))


def test_work_per_rule_grows_linearly_with_the_number_of_kernels():
    def file(n: int) -> str:
        names = [f"k{i}" for i in range(n)]
        return "\n".join(HEADER + [line for name in names for line in _kernel(name, 3)] + _launcher(names))

    _assert_linear(_growth(file(6), file(12)))


def _masked_loads_kernel(statements: int) -> str:
    """The kernel issue 31 timed: `statements` masked loads without `other=`, one of them stored
    (2,500 took 14.6 s in `tritonify check`, 10,000 took 173 s: TRI014 followed every load through
    every statement)."""
    lines = HEADER + ["@triton.jit", "def big(x_ptr, y_ptr, n, BLOCK: tl.constexpr):",
                      "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", "    mask = offs < n"]
    lines += [f"    v{i} = tl.load(x_ptr + offs + {i}, mask=mask)" for i in range(statements)]
    lines += ["    tl.store(y_ptr + offs, v0 + tl.sum(v1, 0), mask=mask)", ""]
    return "\n".join(lines)


def test_work_per_rule_grows_linearly_with_masked_loads():
    _assert_linear(_growth(_masked_loads_kernel(200), _masked_loads_kernel(400)))
