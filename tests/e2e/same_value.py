"""Does a quick fix keep the value of the line it edited?  Used by the real-editor test.

`python same_value.py BEFORE AFTER`: for each line that differs (the fix is a one-line edit),
evaluate the expression (an assignment's value) before and after with a few values for its
names, `libdevice.tanh` as math.tanh and `tl.sigmoid` as the logistic function, and exit 1 when
they differ. Catches an edit that changes precedence (e.g. `tanh(a) * b` becoming
`2 * sigmoid(2 * a) - 1 * b`).
"""
import ast
import math
import sys
from types import SimpleNamespace


class Names(dict):
    """Any name not given evaluates to a number of its own (the same one each time)."""

    def __init__(self, seed: float):
        super().__init__()
        self.seed = seed

    def __missing__(self, name):
        return self.seed + (sum(map(ord, name)) % 17) / 10.0


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


LIBDEVICE = SimpleNamespace(tanh=math.tanh)
TL = SimpleNamespace(sigmoid=sigmoid, extra=SimpleNamespace(cuda=SimpleNamespace(libdevice=LIBDEVICE)), exp=math.exp)


def expression(line: str) -> str | None:
    tree = ast.parse(line.strip())
    stmt = tree.body[0] if tree.body else None
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
        return ast.unparse(stmt.value)
    if isinstance(stmt, ast.Expr):
        return ast.unparse(stmt.value)
    return None


def value(expr: str, seed: float) -> float:
    names = Names(seed)
    names.update(tl=TL, libdevice=LIBDEVICE, cuda_tanh=math.tanh, tanh=math.tanh)
    return eval(compile(expr, "<fix>", "eval"), {"__builtins__": {}}, names)  # noqa: S307 - the test's own copy


def main(before_path: str, after_path: str) -> int:
    before = open(before_path, encoding="utf-8").read().splitlines()
    after = open(after_path, encoding="utf-8").read().splitlines()
    if len(before) != len(after):
        print(f"the fix changed the number of lines ({len(before)} -> {len(after)}); cannot compare line by line")
        return 1
    changed = [(b, a) for b, a in zip(before, after) if b != a]
    if not changed:
        print("nothing changed")
        return 1
    bad = 0
    for b, a in changed:
        eb, ea = expression(b), expression(a)
        if eb is None or ea is None:
            print(f"not an expression line: {b.strip()!r} -> {a.strip()!r}")
            bad += 1
            continue
        for seed in (0.3, -1.1, 2.0):
            vb, va = value(eb, seed), value(ea, seed)
            if not math.isclose(vb, va, rel_tol=1e-6, abs_tol=1e-6):
                print(f"the fix changed the value: {eb} = {vb:.6g} but {ea} = {va:.6g} (names near {seed})")
                bad += 1
                break
        else:
            print(f"same value: {eb}  ->  {ea}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
