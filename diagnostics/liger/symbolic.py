"""A Triton kernel body as a small expression graph, so rules can ask what it computes.

Why a graph and not name matching: a kernel called `rmsnorm` may do something else, and a
kernel called `foo` may be an RMSNorm. What identifies an op is its data flow (mean of
squares -> rsqrt -> scale). `KernelGraph` evaluates the body symbolically, statement by
statement, and records every value that reaches a `tl.store`.

Nodes are hash-consed integers: the same expression built twice is the same id, so "is the
value that was squared the one that is scaled" is an integer comparison. Normal forms make
equal things look equal:

* casts (`.to`, `tl.cast`), broadcasts (`x[:, None]`) and reshapes are dropped;
* `+` and `*` are flattened and their operands sorted (`a*b*c` == `c*(a*b)`);
* `a / b` is `a * recip(b)`, `1 / sqrt(x)` is `rsqrt(x)`, `1 / (1 + exp(-x))` is `sigmoid(x)`;
* `-x` is `-1 * x`; `x ** 2` is `x * x`;
* a name assigned in both branches of an `if` is a `phi` of both values; a loop-carried
  name is a `phi` of its value before the loop and after one pass (`var` stands for itself);
* calls on constants are folded (`rsqrt(2.0)`, `math.sqrt(2.0)`, `exp(0.0)`), `pow(x, 2)` is
  `x * x`, and base-2 forms are their base-e op (`exp2(x * log2e)` is `exp(x)`);
* a math function reached through another module (`from pkg.utils import exp`, a
  `tanh = shim.tanh` alias) is taken for the function its name says when that module's source is
  not available to inline (`MATH_NAMES`);
* `unmask(n)` sees `where(mask, x, 0)` as `x` (what a sum or a square of it computes), and
  `expand(n)` distributes products over small sums (`x * (1 + c*x*x)` -> `x + c*x*x*x`).

A kernel that loads and stores nothing but returns a value (an elementwise functor wrapped by a
launcher such as flag-gems' `pointwise_dynamic`) is read with its parameters as the loaded inputs
and its return value as the stored output.

Node kinds: const, param, var, load (ptr), call (name, args...), mul, add, sub, recip,
cmp (op, a, b), phi, other (label, args...).
"""
from __future__ import annotations

import ast
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from tritonify.diagnostics.triton_ast import (
    ImportMap,
    Kernel,
    libdevice_name,
    tl_name,
    walk_nodes,
)

MAX_INLINE_DEPTH = 3
MAX_NODES = 4000           # Liger's largest kernel has 255; past this a kernel is not analysed (the matchers are quadratic)
QUANT_DTYPES = {
    "int8", "uint8", "float8e4nv", "float8e5", "float8e4b15", "float8e4b8", "float8e5b16",
    "float8_e4m3fn", "float8_e5m2",
}
# Math functions whose meaning their name carries when they come from a module we cannot read.
MATH_NAMES = frozenset({
    "exp", "exp2", "log", "log2", "tanh", "rsqrt", "sqrt", "sigmoid", "erf", "abs", "maximum", "minimum",
    "fast_expf", "fast_logf", "fast_tanhf", "fast_log2f", "pow", "cos", "sin", "div_rn", "fdiv", "sqrt_rn",
})
_FOLD = {
    "sqrt": math.sqrt, "rsqrt": lambda v: 1.0 / math.sqrt(v), "exp": math.exp, "log": math.log, "exp2": lambda v: 2.0 ** v,
    "log2": math.log2, "tanh": math.tanh, "erf": math.erf, "abs": abs,
}
IDENTITY_METHODS = {"to", "cast", "reshape", "view", "broadcast_to", "expand_dims", "trans", "permute", "ravel"}
_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.MatMult: "dot"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


class GraphTooLarge(Exception):
    """Raised when a kernel's graph passes MAX_NODES; the caller then gives up quietly."""


@dataclass
class Store:
    ptr: int
    value: int
    node: ast.AST
    atomic: bool = False


@dataclass
class KernelGraph:
    """The expression graph of one kernel, with its stores and a few whole-kernel facts."""

    nodes: list[tuple] = field(default_factory=list)
    index: dict[tuple, int] = field(default_factory=dict)
    stores: list[Store] = field(default_factory=list)
    has_dot: bool = False
    quantises: bool = False            # casts to an 8-bit type: a quantisation epilogue
    functor: bool = False              # an elementwise functor: parameters are the inputs

    # ---- construction ---------------------------------------------------------------
    def intern(self, key: tuple) -> int:
        found = self.index.get(key)
        if found is not None:
            return found
        if len(self.nodes) >= MAX_NODES:
            raise GraphTooLarge
        self.nodes.append(key)
        self.index[key] = len(self.nodes) - 1
        return len(self.nodes) - 1

    def const(self, value) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return self.intern(("const", repr(value)))
        return self.intern(("const", float(value)))

    def mul(self, *args: int) -> int:
        flat: list[int] = []
        for a in args:
            node = self.nodes[a]
            flat.extend(node[1:] if node[0] == "mul" else (a,))
        if len(flat) == 1:
            return flat[0]
        return self.intern(("mul", *sorted(flat)))

    def add(self, *args: int) -> int:
        flat: list[int] = []
        for a in args:
            node = self.nodes[a]
            flat.extend(node[1:] if node[0] == "add" else (a,))
        if len(flat) == 1:
            return flat[0]
        return self.intern(("add", *sorted(flat)))

    def neg(self, a: int) -> int:
        return self.mul(self.const(-1.0), a)

    def recip(self, a: int) -> int:
        node = self.nodes[a]
        if node[0] == "const" and isinstance(node[1], float) and node[1] != 0.0:
            return self.const(1.0 / node[1])
        if node[0] == "call" and node[1] == "sqrt":
            return self.call("rsqrt", node[2])
        if node[0] == "recip":
            return node[1]
        sig = self._sigmoid_argument(a)
        if sig is not None:
            return self.call("sigmoid", sig)
        return self.intern(("recip", a))

    def _sigmoid_argument(self, a: int) -> int | None:
        """x when `a` is `1 + exp(-x)` (the denominator of a hand-written sigmoid)."""
        node = self.nodes[a]
        if node[0] != "add" or len(node) != 3:
            return None
        one = self.const(1.0)
        others = [t for t in node[1:] if t != one]
        if len(others) != 1 or len(node[1:]) - len(others) != 1:
            return None
        e = self.nodes[others[0]]
        if e[0] != "call" or e[1] != "exp" or len(e) != 3:
            return None
        inner = self.nodes[e[2]]
        minus = self.const(-1.0)
        if inner[0] == "mul" and minus in inner[1:]:
            rest = list(inner[1:])
            rest.remove(minus)
            return self.mul(*rest)
        return None

    def div(self, a: int, b: int) -> int:
        if self.nodes[a] == ("const", 1.0):
            return self.recip(b)
        return self.mul(a, self.recip(b))

    def sub(self, a: int, b: int) -> int:
        return self.intern(("sub", a, b))

    def call(self, name: str, *args: int) -> int:
        folded = self._fold(name, args)
        if folded is not None:
            return folded
        return self.intern(("call", name, *args))

    def _fold(self, name: str, args: tuple[int, ...]) -> int | None:
        """A call on constants as the constant it computes (`rsqrt(2.0)` -> 0.7071...)."""
        fn = _FOLD.get(name)
        if fn is None or len(args) != 1:
            return None
        node = self.nodes[args[0]]
        if node[0] != "const" or not isinstance(node[1], float):
            return None
        try:
            return self.const(float(fn(node[1])))
        except (ValueError, OverflowError):
            return None

    # ---- normal forms read by the recognisers --------------------------------------------
    def unmask(self, n: int) -> int:
        """`where(mask, x, 0)` (or `where(mask, 0, x)`) as `x`: in a sum or a square the
        masked-off lanes contribute zero either way."""
        zero = self.index.get(("const", 0.0))
        for _ in range(4):
            node = self.nodes[n]
            if node[0] != "call" or node[1] != "where" or len(node) != 5 or zero is None:
                return n
            if node[4] == zero:
                n = node[3]
            elif node[3] == zero:
                n = node[4]
            else:
                return n
        return n

    def expand(self, n: int, budget: int = 24) -> int:
        """n with products distributed over sums, for small polynomials only
        (`c * x * (1 + d * x * x)` -> `c*x + c*d*x*x*x`); larger expressions are left alone."""
        node = self.nodes[n]
        if node[0] == "add":
            return self.add(*[self.expand(t, budget) for t in node[1:]])
        if node[0] != "mul":
            return n
        terms: list[list[int]] = [[]]
        for f in node[1:]:
            fnode = self.nodes[f]
            if fnode[0] == "add" and len(terms) * (len(fnode) - 1) <= budget:
                parts = [self.expand(t, budget) for t in fnode[1:]]
                terms = [t + [p] for t in terms for p in parts]
            else:
                terms = [t + [f] for t in terms]
        if len(terms) == 1:
            return n
        return self.add(*[self.mul(*t) for t in terms])

    def phi(self, *args: int) -> int:
        flat: set[int] = set()
        for a in args:
            node = self.nodes[a]
            flat.update(node[1:] if node[0] == "phi" else (a,))
        if len(flat) == 1:
            return next(iter(flat))
        return self.intern(("phi", *sorted(flat)))

    # ---- queries ----------------------------------------------------------------------
    def kind(self, n: int) -> str:
        return self.nodes[n][0]

    def node(self, n: int) -> tuple:
        return self.nodes[n]

    def children(self, n: int) -> tuple[int, ...]:
        node = self.nodes[n]
        kind = node[0]
        if kind in ("const", "param", "var"):
            return ()
        if kind in ("call", "other"):
            return tuple(node[2:])
        if kind == "cmp":
            return tuple(node[2:])
        return tuple(node[1:])

    def is_call(self, n: int, *names: str) -> bool:
        node = self.nodes[n]
        return node[0] == "call" and node[1] in names

    def walk(self, roots: Iterable[int], *, into_pointers: bool = True) -> set[int]:
        """Every node reachable from `roots` (through load pointers unless told not to)."""
        seen: set[int] = set()
        stack = list(roots)
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            if not into_pointers and self.nodes[n][0] == "load":
                continue
            stack.extend(self.children(n))
        return seen

    def _summaries(self) -> tuple[list[frozenset[int]], list[frozenset[str]]]:
        """Per node: the loads whose values flow into it, and the call names it reaches (not
        through load addresses). Children always have smaller ids than their parents, so one
        pass in id order fills both; it is extended when nodes are added later."""
        d = self.__dict__
        loads: list[frozenset[int]] | None = d.get("_loads")
        if loads is not None and len(loads) == len(self.nodes):
            return loads, d["_calls"]      # up to date: the common case, asked per node
        loads = d.setdefault("_loads", [])
        calls: list[frozenset[str]] = d.setdefault("_calls", [])
        empty_i: frozenset[int] = frozenset()
        empty_s: frozenset[str] = frozenset()
        for i in range(len(loads), len(self.nodes)):
            node = self.nodes[i]
            if node[0] == "load":
                loads.append(frozenset((i,)))
                calls.append(empty_s)
                continue
            kids = self.children(i)
            lset = frozenset().union(*(loads[c] for c in kids)) if kids else empty_i
            cset = frozenset().union(*(calls[c] for c in kids)) if kids else empty_s
            if node[0] == "call":
                cset = cset | {node[1]}
            loads.append(lset)
            calls.append(cset)
        return loads, calls

    def value_loads(self, n: int) -> frozenset[int]:
        """The loads whose *values* flow into `n` (not loads only used to form an address)."""
        return self._summaries()[0][n]

    def call_names(self, n: int) -> frozenset[str]:
        """Names of the calls whose results flow into `n` (not through load addresses)."""
        return self._summaries()[1][n]

    def live(self) -> set[int]:
        """Every node that reaches memory through a store (value or address)."""
        cache = self.__dict__.get("_live")
        if cache is None:
            cache = self.walk([s.value for s in self.stores] + [s.ptr for s in self.stores])
            self.__dict__["_live"] = cache
        return cache

    def factors(self, n: int) -> tuple[int, ...]:
        node = self.nodes[n]
        return tuple(node[1:]) if node[0] == "mul" else (n,)

    def find(self, key: tuple) -> int | None:
        """The id of an expression if the kernel computes it, without creating it."""
        return self.index.get(key)



class _Builder:
    """Evaluates a kernel's statements into a KernelGraph."""

    def __init__(self, imports: ImportMap, helpers: dict[str, ast.FunctionDef], own: ast.FunctionDef | None = None,
                 fixed: dict[str, object] | None = None):
        self.g = KernelGraph()
        self.imports = imports
        self.helpers = helpers        # @jit functions of the file that a call may inline
        self.own = own                # the kernel being built (never inlined into itself)
        self.fixed = fixed or {}      # constexpr parameters given one value (a specialisation)
        self.depth = 0

    def decide(self, test: ast.expr) -> bool | None:
        """The value of a branch test on the fixed constexpr parameters, or None when it
        depends on anything else (`ACT == "silu"`, `not IS_RMS_NORM`, `HAS_BIAS and ...`)."""
        fixed = self.fixed
        if not fixed:
            return None   # (inside an inlined helper `fixed` holds the helper's own parameters bound to fixed values)
        if isinstance(test, ast.Name) and test.id in fixed:
            return bool(fixed[test.id])
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.decide(test.operand)
            return None if inner is None else not inner
        if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)
                and test.left.id in fixed and isinstance(test.comparators[0], ast.Constant)):
            value, other, op = fixed[test.left.id], test.comparators[0].value, test.ops[0]
            if isinstance(op, (ast.Eq, ast.Is)):
                return value == other
            if isinstance(op, (ast.NotEq, ast.IsNot)):
                return value != other
            return None
        if isinstance(test, ast.BoolOp):
            parts = [self.decide(v) for v in test.values]
            if isinstance(test.op, ast.And):
                if False in parts:
                    return False
                return True if all(p is True for p in parts) else None
            if True in parts:
                return True
            return False if all(p is False for p in parts) else None
        return None

    # ---- statements -----------------------------------------------------------------
    def block(self, stmts: list[ast.stmt], env: dict[str, int]) -> int | None:
        """Run statements; returns the value of a `return` (for inlined helpers)."""
        for stmt in stmts:
            result = self.stmt(stmt, env)
            if result is not None:
                return result
        return None

    def stmt(self, stmt: ast.stmt, env: dict[str, int]) -> int | None:
        g = self.g
        if isinstance(stmt, ast.Assign):
            value = self.expr(stmt.value, env)
            for target in stmt.targets:
                self.bind(target, value, stmt.value, env)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.bind(stmt.target, self.expr(stmt.value, env), stmt.value, env)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            name = stmt.target.id
            old = env.get(name, g.intern(("var", name)))
            env[name] = self.binop(type(stmt.op), old, self.expr(stmt.value, env))
        elif isinstance(stmt, ast.Expr):
            self.expr(stmt.value, env)
        elif isinstance(stmt, ast.If):
            decided = self.decide(stmt.test)
            if decided is not None:   # a specialisation: only the branch this value takes
                return self.block(stmt.body if decided else stmt.orelse, env)
            self.expr(stmt.test, env)
            left, right = dict(env), dict(env)
            ret_l = self.block(stmt.body, left)
            ret_r = self.block(stmt.orelse, right)
            self.merge(env, left, right)
            rets = [r for r in (ret_l, ret_r) if r is not None]
            if rets and len(rets) == 2:
                return g.phi(*rets)
        elif isinstance(stmt, (ast.For, ast.While)):
            self.loop(stmt, env)
        elif isinstance(stmt, ast.With):
            return self.block(stmt.body, env)
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            return self.expr(stmt.value, env)
        return None

    def loop(self, stmt: ast.For | ast.While, env: dict[str, int]) -> None:
        g = self.g
        assigned = _assigned_in(stmt)
        before = dict(env)
        if isinstance(stmt, ast.For):
            self.expr(stmt.iter, env)
            for t in walk_nodes(stmt.target):
                if isinstance(t, ast.Name):
                    env[t.id] = g.intern(("var", t.id))
        else:
            self.expr(stmt.test, env)
        for name in assigned:
            carried = g.intern(("var", name))
            env[name] = g.phi(before[name], carried) if name in before else carried
        self.block(stmt.body, env)
        for name in assigned:
            if name in before:
                env[name] = g.phi(before[name], env[name])

    def merge(self, env: dict[str, int], left: dict[str, int], right: dict[str, int]) -> None:
        for name in set(left) | set(right):
            a, b = left.get(name), right.get(name)
            if a is None or b is None or a == b:   # phi of one value is that value (no node made)
                env[name] = b if a is None else a
            else:
                env[name] = self.g.phi(a, b)

    def bind(self, target: ast.expr, value: int, value_node: ast.expr, env: dict[str, int]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            parts = value_node.elts if isinstance(value_node, (ast.Tuple, ast.List)) else None
            for i, t in enumerate(target.elts):
                if parts is not None and i < len(parts) and isinstance(t, ast.Name):
                    env[t.id] = self.expr(parts[i], env)
                else:
                    for n in walk_nodes(t):
                        if isinstance(n, ast.Name):
                            env[n.id] = self.g.intern(("other", "unpack", value, self.g.const(i)))

    # ---- expressions ------------------------------------------------------------------
    def binop(self, op: type, a: int, b: int) -> int:
        g = self.g
        kind = _BINOPS.get(op)
        if kind == "add":
            return g.add(a, b)
        if kind == "sub":
            return g.sub(a, b)
        if kind == "mul":
            return g.mul(a, b)
        if kind == "div":
            return g.div(a, b)
        if kind == "dot":
            g.has_dot = True
            return g.call("dot", a, b)
        return g.intern(("other", op.__name__, a, b))

    def expr(self, node: ast.expr | None, env: dict[str, int]) -> int:
        g = self.g
        if node is None:
            return g.const(None)
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            literal = self._imported_constant(node)
            if literal is not None:
                return self.expr(literal, env)
            return g.intern(("var", node.id))
        if isinstance(node, ast.Constant):
            return g.const(node.value)
        if isinstance(node, ast.BinOp):
            a, b = self.expr(node.left, env), self.expr(node.right, env)
            if isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant) and node.right.value in (2, 3):
                return g.mul(*([a] * int(node.right.value)))
            return self.binop(type(node.op), a, b)
        if isinstance(node, ast.UnaryOp):
            a = self.expr(node.operand, env)
            if isinstance(node.op, ast.USub):
                return g.neg(a)
            if isinstance(node.op, ast.UAdd):
                return a
            return g.intern(("other", type(node.op).__name__, a))
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            op = _CMPOPS.get(type(node.ops[0]), type(node.ops[0]).__name__)
            return g.intern(("cmp", op, self.expr(node.left, env), self.expr(node.comparators[0], env)))
        if isinstance(node, ast.IfExp):
            decided = self.decide(node.test)
            if decided is not None:
                return self.expr(node.body if decided else node.orelse, env)
            self.expr(node.test, env)
            return g.phi(self.expr(node.body, env), self.expr(node.orelse, env))
        if isinstance(node, ast.Subscript):
            base = self.expr(node.value, env)
            if _is_broadcast_index(node.slice):
                return base
            return g.intern(("other", "subscript", base, self.expr(node.slice, env) if not isinstance(node.slice, ast.Slice) else g.const("slice")))
        if isinstance(node, ast.Call):
            return self.call(node, env)
        if isinstance(node, ast.Attribute):
            path = self.imports.resolve(node)
            if path and path.split(".")[0] in ("triton", "torch"):
                return g.const(path)
            base = self.expr(node.value, env)
            if node.attr == "T":
                return base
            return g.intern(("other", "attr." + node.attr, base))
        if isinstance(node, (ast.Tuple, ast.List)):
            return g.intern(("other", "tuple", *[self.expr(e, env) for e in node.elts]))
        if isinstance(node, ast.BoolOp):
            return g.intern(("other", type(node.op).__name__, *[self.expr(v, env) for v in node.values]))
        return g.intern(("other", type(node).__name__))

    def _note_dtype(self, node: ast.expr) -> None:
        for n in walk_nodes(node):
            path = self.imports.resolve(n) if isinstance(n, (ast.Name, ast.Attribute)) else None
            if path and path.rsplit(".", 1)[-1] in QUANT_DTYPES:
                self.g.quantises = True
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.lstrip("*") in {"i8", "u8", "fp8e4nv", "fp8e5"}:
                self.g.quantises = True

    def call(self, node: ast.Call, env: dict[str, int]) -> int:
        g = self.g
        func = node.func
        # tensor methods: x.to(...), x.reshape(...)
        if isinstance(func, ast.Attribute) and tl_name(self.imports, func) is None and libdevice_name(self.imports, func) is None:
            base_path = self.imports.resolve(func.value)
            if not (base_path and base_path.split(".")[0] in ("triton", "torch")):
                base = self.expr(func.value, env)
                if func.attr in IDENTITY_METHODS:
                    for a in [*node.args, *[k.value for k in node.keywords]]:
                        self._note_dtype(a)
                    return base
                args = [self.expr(a, env) for a in node.args]
                return g.intern(("other", "." + func.attr, base, *args))
        name = tl_name(self.imports, func) or libdevice_name(self.imports, func)
        args = [self.expr(a, env) for a in node.args]
        kwargs = {k.arg: k.value for k in node.keywords if k.arg}
        if name is None:
            if (isinstance(func, ast.Name) and func.id in self.helpers and self.helpers[func.id] is not self.own
                    and self.depth < MAX_INLINE_DEPTH):
                return self.inline(self.helpers[func.id], args, kwargs, env, arg_nodes=node.args)
            imported = self._imported_helper(func)
            if imported is not None:
                call_node = node
                node, imports = imported
                return self.inline(node, args, kwargs, env, imports=imports, arg_nodes=call_node.args)
            name = self.imports.resolve(func) or "?"
            last = name.rsplit(".", 1)[-1]
            if name != last and last in MATH_NAMES and not name.startswith("triton."):
                name = last   # `from pkg.ops.utils import exp`: a helper module we cannot read here
        name = name.rsplit(".", 1)[-1] if name.startswith(("math.", "extra.", "standard.")) else name
        if name in ("cast",):
            for a in node.args[1:]:
                self._note_dtype(a)
            for k in node.keywords:
                self._note_dtype(k.value)
            return args[0] if args else g.const(None)
        if name == "load":
            ptr = args[0] if args else self.expr(kwargs.get("pointer"), env)
            return g.intern(("load", ptr))
        if name in ("store", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas"):
            ptr = args[0] if args else self.expr(kwargs.get("pointer"), env)
            value = args[1] if len(args) > 1 else self.expr(kwargs.get("value") or kwargs.get("val"), env)
            g.stores.append(Store(ptr, value, node, atomic=name != "store"))
            return g.const(None)
        if name in ("dot", "dot_scaled"):
            g.has_dot = True
        if name == "fma" and len(args) == 3:
            return g.add(g.mul(args[0], args[1]), args[2])
        if name in ("div_rn", "fdiv") and len(args) == 2:
            return g.div(args[0], args[1])
        if name in ("sqrt_rn",):
            name = "sqrt"
        if name == "inline_asm_elementwise":
            mapped = self._asm_math(node, env)
            if mapped is not None:
                return mapped
        if name == "pow" and len(args) == 2:
            exponent = g.node(args[1])
            if exponent[0] == "const" and exponent[1] in (2.0, 3.0):
                return g.mul(*([args[0]] * int(exponent[1])))
        if name in ("fast_logf",):
            name = "log"
        if name in ("fast_tanhf",):
            name = "tanh"
        if name in ("exp2",) and args:
            return g.call("exp", _without_log2e(g, args[0]))   # exp2(x * log2e) is exp(x)
        if name in ("log2",) and args:
            return g.call("log", args[0])
        if name == "fast_expf":
            name = "exp"
        if name == "where" and len(args) == 3:
            return g.call("where", *args)
        return g.call(name, *args)

    def _asm_math(self, node: ast.Call, env: dict[str, int]) -> int | None:
        """A one-instruction PTX approximation as the function it computes:
        `inline_asm_elementwise("rsqrt.approx.ftz.f32 $0, $1;", "=f,f", [x], ...)` is rsqrt(x)."""
        kwargs = {k.arg: k.value for k in node.keywords if k.arg}
        asm = node.args[0] if node.args else kwargs.get("asm")
        operands = node.args[2] if len(node.args) > 2 else kwargs.get("args")
        if not (isinstance(asm, ast.Constant) and isinstance(asm.value, str)) or not isinstance(operands, (ast.List, ast.Tuple)):
            return None
        text = asm.value.strip()
        if text.count(";") != 1 or len(operands.elts) != 1:
            return None   # several instructions: not one math function
        op = text.split()[0] if text.split() else ""
        x = self.expr(operands.elts[0], env)
        g = self.g
        for prefix, fn in (("rsqrt.", "rsqrt"), ("sqrt.", "sqrt"), ("tanh.", "tanh"), ("lg2.", "log"), ("sin.", "sin"), ("cos.", "cos")):
            if op.startswith(prefix):
                return g.call(fn, x)
        if op.startswith("ex2."):
            return g.call("exp", _without_log2e(g, x))
        if op.startswith("rcp."):
            return g.recip(x)
        return None

    def _imported_constant(self, node: ast.Name) -> ast.expr | None:
        """The literal of a constant imported from another workspace module (`LOG2E`)."""
        lookup = getattr(self.imports, "constant", None)
        literal = lookup(node) if lookup is not None else None
        return literal if isinstance(literal, (ast.Constant, ast.UnaryOp, ast.BinOp)) else None

    def _imported_helper(self, func: ast.expr) -> tuple[ast.FunctionDef, ImportMap] | None:
        """A `@triton.jit` helper of another workspace module (`from .utils import softplus`),
        with the imports of its own module, found through the workspace index."""
        if self.depth >= MAX_INLINE_DEPTH:
            return None
        lookup = getattr(self.imports, "helper", None)
        try:
            helper = lookup(func) if lookup is not None else None
            node = helper.node if helper is not None else None
            if node is None or node is self.own:
                return None
            return node, helper.imports()
        except Exception:   # a module that cannot be read resolves to nothing
            return None

    def inline(self, fn: ast.FunctionDef, args: list[int], kwargs: dict[str, ast.expr], env: dict[str, int],
               imports: ImportMap | None = None, arg_nodes: list[ast.expr] = ()) -> int:
        params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        # a fixed constexpr passed on to the helper (`_act(x, ACT)`) fixes the helper's parameter:
        # its branches on it (`if ACT == "silu":` inside the helper) follow the specialisation
        inner_fixed = {p: self.fixed[a.id] for p, a in zip(params, arg_nodes)
                       if isinstance(a, ast.Name) and a.id in self.fixed}
        inner_fixed.update({k: self.fixed[v.id] for k, v in kwargs.items()
                            if isinstance(v, ast.Name) and v.id in self.fixed})
        local: dict[str, int] = {}
        for p, v in zip(params, args):
            local[p] = v
        for k, v in kwargs.items():
            local[k] = self.expr(v, env)
        for p in params:
            local.setdefault(p, self.g.intern(("param", p)))
        saved_imports, saved_helpers = self.imports, self.helpers
        if imports is not None:   # names in another module's helper are that module's names
            self.imports, self.helpers = imports, {}
        saved_fixed, self.fixed = self.fixed, inner_fixed
        self.depth += 1
        try:
            result = self.block(fn.body, local)
        finally:
            self.depth -= 1
            self.fixed = saved_fixed
            self.imports, self.helpers = saved_imports, saved_helpers
        return result if result is not None else self.g.const(None)


LOG2E = 1.4426950408889634


def _without_log2e(g: KernelGraph, n: int) -> int:
    """x for `x * log2(e)` (the base-2 spelling of exp's argument); other scales stay."""
    node = g.node(n)
    if node[0] != "mul":
        return n
    rest = [f for f in node[1:] if not (g.node(f)[0] == "const" and isinstance(g.node(f)[1], float)
                                        and abs(g.node(f)[1] - LOG2E) < 1e-3)]
    return g.mul(*rest) if rest and len(rest) < len(node) - 1 else n


def _is_broadcast_index(s: ast.expr) -> bool:
    """`[:, None]`, `[None, :]`, `[:]`: indexing that only adds axes."""
    elts = s.elts if isinstance(s, ast.Tuple) else [s]
    return all(
        (isinstance(e, ast.Constant) and e.value is None) or (isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None)
        for e in elts
    )


MEMORY_CALLS = frozenset({"load", "store", "atomic_add", "make_block_ptr"})


def _assigned_in(loop: ast.For | ast.While) -> tuple[str, ...]:
    """The names a loop body assigns, read once per loop node (a kernel's graph is built again for
    each constexpr specialisation, and nested loops are walked again by each enclosing one); kept
    in the order of the set the walk builds, so the graph's node ids do not change."""
    cached = loop.__dict__.get("_tritonify_assigned")
    if cached is None:
        cached = tuple({t.id for node in loop.body for t in walk_nodes(node)
                        if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)})
        loop.__dict__["_tritonify_assigned"] = cached
    return cached


def _is_functor(fn: ast.FunctionDef, imports: ImportMap) -> bool:
    """A jit function that loads and stores nothing and returns a value: an elementwise functor
    that a launcher (flag-gems' `pointwise_dynamic`, a `tl.map`-style wrapper) applies per element."""
    returns = False
    stack = list(reversed(fn.body))
    while stack:   # statement by statement, in order: a kernel's first load ends the scan early
        stmt = stack.pop()
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)):
            heads = [getattr(stmt, "test", None), getattr(stmt, "iter", None)] + [i.context_expr for i in getattr(stmt, "items", [])]
            nodes = [n for h in heads if h is not None for n in walk_nodes(h)]
            stack.extend(reversed(getattr(stmt, "orelse", [])))
            stack.extend(reversed(stmt.body))
        else:
            nodes = walk_nodes(stmt)
        for n in nodes:
            if isinstance(n, ast.Call):
                short = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", None)
                if short in MEMORY_CALLS and tl_name(imports, n.func) in MEMORY_CALLS:
                    return False
            elif isinstance(n, ast.Return) and n.value is not None:
                returns = True
    return returns


def specialisations(kernel: Kernel, limit: int = 4,
                    helpers: dict[str, ast.FunctionDef] | None = None) -> list[tuple[str, list[object]]]:
    """The constexpr parameters a kernel branches on, with the values worth fixing: each string
    or number it is compared with (`ACT == "silu"`), or True/False for a flag tested as such
    (`if IS_RMS_NORM:`). At most `limit` parameters, in the order they are first tested. With
    `helpers` (the file's @jit functions), a test inside a helper the kernel passes the parameter
    to (`_act(x, ACT)`, then `if ACT == "silu":` in `_act`) counts for that parameter."""
    constexprs = {p.name for p in kernel.params if p.constexpr}
    found: dict[str, list[object]] = {}
    alias: dict[str, str] = {}    # a name in the function being scanned -> the kernel's parameter

    def note(name: str, value: object) -> None:
        name = alias.get(name, name)
        if name in constexprs and value not in found.setdefault(name, []):
            found[name].append(value)

    def scan(test: ast.expr) -> None:
        if isinstance(test, ast.Name):
            note(test.id, True)
            note(test.id, False)
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            scan(test.operand)
        elif isinstance(test, ast.BoolOp):
            for v in test.values:
                scan(v)
        elif (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)
              and isinstance(test.comparators[0], ast.Constant)
              and isinstance(test.ops[0], (ast.Eq, ast.NotEq)) and isinstance(test.comparators[0].value, (str, int))):
            note(test.left.id, test.comparators[0].value)

    passed: list[tuple[ast.FunctionDef, dict[str, str]]] = []
    for node in walk_nodes(kernel.node):
        if isinstance(node, (ast.If, ast.IfExp)):
            scan(node.test)
        elif helpers and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in helpers and helpers[node.func.id] is not kernel.node:
            fn = helpers[node.func.id]
            params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
            names = {p: a.id for p, a in zip(params, node.args) if isinstance(a, ast.Name) and a.id in constexprs}
            names.update({k.arg: k.value.id for k in node.keywords
                          if k.arg and isinstance(k.value, ast.Name) and k.value.id in constexprs})
            if names:
                passed.append((fn, names))
    for fn, names in passed:
        alias = names
        for node in walk_nodes(fn):
            if isinstance(node, (ast.If, ast.IfExp)):
                scan(node.test)
    alias = {}
    del scan, note   # the recursive closure refers to itself: free it now, not at a GC pass
    return [(name, values) for name, values in found.items()][:limit]


def build_graph(kernel: Kernel, imports: ImportMap, helpers: dict[str, ast.FunctionDef],
                fixed: dict[str, object] | None = None) -> KernelGraph | None:
    """The graph of a kernel's body, or None when it is too large to analyse. `fixed` gives
    constexpr parameters one value: only the branches that value takes are built."""
    builder = _Builder(imports, helpers, kernel.node, fixed)
    g = builder.g
    functor = g.functor = _is_functor(kernel.node, imports)
    if functor:
        # each parameter is one element of an input tensor; the result is written out
        env = {p.name: g.intern(("load", g.intern(("param", p.name)))) for p in kernel.params}
    else:
        env = {p.name: g.intern(("param", p.name)) for p in kernel.params}
    try:
        result = builder.block(kernel.node.body, env)
        if functor and result is not None:
            node = g.node(result)
            outputs = node[2:] if node[0] == "other" and node[1] == "tuple" else (result,)
            for i, out in enumerate(outputs):
                g.stores.append(Store(g.intern(("param", f"<out{i}>")), out, kernel.node))
    except (GraphTooLarge, RecursionError):
        return None
    return g
