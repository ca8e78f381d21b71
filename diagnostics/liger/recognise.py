"""Which Liger op, if any, a kernel's expression graph computes.

Each recogniser looks for the data flow that defines an op, among the values that reach a
store (dead code does not count). `recognise` then decides whether the kernel is a standalone
re-implementation worth flagging:

* a kernel with `tl.dot` is a matmul or attention kernel, unless the op is fused linear
  cross-entropy (whose logits come from the dot);
* a kernel that also quantises (casts to 8-bit) or scatters through loaded indices (a KV-cache
  write) does other work Liger does not do;
* a kernel in which two unrelated ops are found (RMSNorm + RoPE) is a fused kernel;
* fused forms and variants Liger does not ship are no finding (issue 26, the Liger-first policy's
  own exceptions): a norm of a computed combination, scaled by a per-row gate or modulation, with
  a residual added after it, over several tensors in one launch, or whose output is reduced again;
  a GLU reading a third tensor; pairs split with `tl.split` (interleaved layouts); a softmax
  inside a top-k selection or weighting another tensor (attention, split-KV merge); RoPE over
  rows placed through loaded offsets (varlen); an op fused with a gather through loaded indices;
  an output written several times.
Ops that contain another (cross-entropy contains a softmax, JSD contains KL terms, fused
add + RMSNorm contains RMSNorm) keep only the larger one.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from tritonify.diagnostics.liger.symbolic import KernelGraph

SUBSUMES: dict[str, set[str]] = {
    "fused_linear_cross_entropy": {"cross_entropy", "softmax", "kl_div"},
    "cross_entropy": {"softmax", "kl_div"},
    "jsd": {"kl_div", "softmax"},
    "fused_add_rms_norm": {"rms_norm"},
    "layer_norm": {"rms_norm"},
    "group_norm": {"rms_norm", "layer_norm"},
    "poly_norm": {"rms_norm"},
    "modulated_rms_norm": {"rms_norm"},
    "qwen2vl_mrope": {"rope"},
    "geglu": {"swiglu"},
}


# Calls that, multiplied into a norm's output, mean the kernel does more than the norm.
FUSED_WORK = frozenset({"exp", "tanh", "erf", "sigmoid", "log", "sin", "cos", "rand", "randn", "randint", "dot"})


# Calls that make a value a row reduction (or built from one), not an elementwise input.
REDUCTIONS = frozenset({"sum", "max", "min", "rsqrt", "sqrt", "cumsum", "dot", "reduce", "xor_sum"})
# Calls a SwiGLU/GeGLU gate never goes through (the gate is the loaded input, maybe scaled).
GATE_FORBIDS = frozenset({"exp", "log", "softplus", "sum", "rsqrt", "sqrt"})
# Liger ops that are elementwise: a kernel that also reduces rows does other work.
ELEMENTWISE_OPS = frozenset({"swiglu", "geglu", "rope", "qwen2vl_mrope", "relu_squared", "llama4_rope"})
# Ops whose definition reads through loaded indices (the target logit; cos/sin at positions).
GATHERING_OPS = frozenset({"cross_entropy", "fused_linear_cross_entropy", "rope", "qwen2vl_mrope"})
# Random numbers: sampling or dropout, which no Liger op does.
RANDOM = frozenset({"rand", "randn", "randint", "randint4x", "rand4x", "philox"})


@dataclass(frozen=True)
class Recognition:
    op: str | None                  # the Liger op key, when the kernel is a standalone one
    found: tuple[str, ...] = ()     # every op recognised, before the standalone decision
    reason: str = ""                # why nothing is reported although something was found
    differs: str = ""               # how the kernel's function differs from Liger's op (not a drop-in)


class _Matcher:
    def __init__(self, g: KernelGraph):
        self.g = g
        self.live = g.live()

    # ---- small predicates ---------------------------------------------------------------
    def loads(self, n: int) -> frozenset[int]:
        return self.g.value_loads(n)

    @cached_property
    def _live_by_kind(self) -> dict[str, list[int]]:
        """The live nodes by kind, each list in the live set's order (one pass, asked often)."""
        out: dict[str, list[int]] = {}
        nodes = self.g.nodes
        for n in self.live:
            out.setdefault(nodes[n][0], []).append(n)
        return out

    def of_kind(self, kind: str) -> list[int]:
        return list(self._live_by_kind.get(kind, ()))

    def calls(self, *names: str) -> list[int]:
        nodes = self.g.nodes
        return [n for n in self._live_by_kind.get("call", ()) if nodes[n][1] in names]

    def contains_call(self, n: int, *names: str) -> bool:
        return not self.g.call_names(n).isdisjoint(names)

    def is_const(self, n: int, value: float) -> bool:
        return self.g.node(n) == ("const", float(value))

    def arg(self, n: int) -> int:
        return self.g.node(n)[2]

    def squares(self, n: int) -> set[int]:
        """Bases b of every `b * b` that flows into n."""
        out = set()
        for m in self.g.walk([n], into_pointers=False):
            if self.g.kind(m) == "mul":
                f = self.g.factors(m)
                out.update(self.g.unmask(x) for x in set(f) if f.count(x) >= 2)
        return out

    def averaged(self, arg: int) -> bool:
        """The row sum under an rsqrt is divided by the row length (`sum(x*x) / N`,
        `sum(x*x) * (1.0 / D)`, `sum(x*x / N)`): a mean of squares. Without it the kernel
        computes an L2 normalisation (`x / sqrt(sum(x*x) + eps)`, weight norm), not RMSNorm."""
        g = self.g

        def scales(f: int) -> bool:
            node = g.node(f)
            return node[0] == "recip" or (node[0] == "const" and isinstance(node[1], float) and 0.0 < abs(node[1]) < 1.0)

        for m in g.walk([arg], into_pointers=False):
            node = g.node(m)
            if node[0] == "mul" and any(scales(f) for f in node[1:]) and any(self.contains_call(f, "sum") for f in node[1:]):
                return True
            if node[0] == "call" and node[1] == "sum" and len(node) > 2:
                inner = g.node(node[2])
                if inner[0] == "mul" and any(scales(f) for f in inner[1:]):
                    return True
        return False

    def sources(self, n: int) -> frozenset[int]:
        """The pointer parameters n's values are loaded from. Two passes over a row reload it
        with different index expressions (other loop variables), so identity of load nodes is
        too strict for "the same data"; the tensor they come from is not."""
        out: set[int] = set()
        for ld in self.loads(n):
            out |= _bases(self.g, self.g.node(ld)[1])
        return frozenset(out)

    def same_data(self, a: int, b: int) -> bool:
        if a == b:
            return True
        sa = self.sources(a)
        return bool(sa) and sa == self.sources(b) and self.g.kind(a) == self.g.kind(b)

    def is_mean_of(self, mu: int, x: int) -> bool:
        """mu is sum(...x...) scaled: a mean of x's values."""
        if not self.contains_call(mu, "sum"):
            return False
        return bool(self.loads(mu) & self.loads(x)) or bool(self.sources(x)) and self.sources(x) <= self.sources(mu)

    def centred(self, d: int) -> tuple[int, int] | None:
        """(x, mean) when d is x - mean(x) (possibly under a where)."""
        node = self.g.node(d)
        if node[0] == "call" and node[1] == "where" and len(node) == 5:
            for branch in node[3:5]:
                got = self.centred(branch)
                if got:
                    return got
            return None
        if node[0] == "sub" and self.loads(node[1]) and self.is_mean_of(node[2], node[1]):
            return node[1], node[2]
        return None

    # ---- norms ---------------------------------------------------------------------------
    def _output_closure(self) -> set[int]:
        """Stored values, looked through masks (`where`), compile-time branches (`phi`) and
        additions (a bias, a shift): the nodes a kernel writes out as its result."""
        cached = self.__dict__.get("_closure")
        if cached is not None:
            return cached
        out: set[int] = set()
        stack = [st.value for st in self.g.stores]
        while stack:
            n = stack.pop()
            if n in out:
                continue
            out.add(n)
            node = self.g.node(n)
            if node[0] in ("phi", "add"):
                stack.extend(node[1:])
            elif node[0] == "call" and node[1] == "where" and len(node) == 5:
                stack.extend(node[3:5])
        self.__dict__["_closure"] = out
        return out

    def norms(self) -> set[str]:
        found: set[str] = set()
        powers: set[int] = set()         # n of every x**n * rstd stored (PolyNorm normalises x, x^2, x^3)
        outputs = self._output_closure()
        for r in self.calls("rsqrt"):
            arg = self.arg(r)
            if not self.contains_call(arg, "sum"):
                continue
            bases = self.squares(arg)
            if not bases:
                continue
            averaged = self.averaged(arg)
            for m, f in self._norm_products(outputs):
                if r not in f:
                    continue
                if any(not self.g.call_names(x).isdisjoint(FUSED_WORK) for x in f if x != r):
                    continue   # norm followed by an activation or dropout in the same product
                if self._gated_elsewhere(m, outputs):
                    continue   # `y = norm(x)` and, under a constexpr, `y * silu(z)`: a gated norm
                for x in set(f):
                    if x == r:
                        continue
                    if self._gathered(x):
                        continue   # rows picked through an index (an embedding lookup): fused work
                    centred = self.centred(x)
                    if centred and self._computed_input(centred[0]):
                        continue   # LayerNorm of a gated residual sum or another combination
                    if centred:
                        weights = [v for w in f if w not in (r, x) for v in self._loads_through_phi(w)]
                        scalar = self._program_scalar_weight(weights)
                        if scalar == "channel":
                            found.add("group_norm")     # instance norm: w[pid % C], one group per channel
                            continue
                        if scalar == "program":
                            continue                    # batch norm: one feature per program, no Liger op
                        per_channel = any(self._per_channel_weight(w, centred[0]) for w in weights)
                        found.add("group_norm" if per_channel else "layer_norm")
                    elif (averaged and self.loads(x) and self.g.kind(x) != "sub"
                          and any(self.same_data(self.g.unmask(x), b) for b in bases)):
                        if f.count(x) > 1:
                            powers.add(f.count(x))
                            continue
                        powers.add(1)
                        if self._computed_input(x):
                            continue   # the norm of a combination the kernel computes: a fused prologue
                        if self._gated_by_a_row_tensor(f, x, r):
                            continue   # rms(x) * w * g with g another activation: a gated norm
                        if self._modulated(f, x, r):
                            found.add("modulated_rms_norm")
                        else:
                            if self._gemma_weight(f, x, r):
                                self.__dict__["rms_gemma"] = True
                            found.add("fused_add_rms_norm" if self._is_residual_sum(x) else "rms_norm")
        if max(powers, default=0) > 1:
            # x^2 or x^3 normalised: not an RMSNorm. PolyNorm when several powers are summed.
            found.discard("rms_norm")
            if len(powers) > 1:
                found.add("poly_norm")
        return found

    def _gathered(self, x: int) -> bool:
        """x's values are loaded at addresses computed from other loaded values (`table[ids]`):
        the kernel fuses a gather (an embedding lookup, a token permutation) into the norm."""
        g = self.g
        return any(g.value_loads(g.node(ld)[1]) for ld in self.loads(x))

    def _program_scalar_weight(self, weights: list[int]) -> str | None:
        """How a norm's affine weight is indexed when it is one scalar per program (no column
        arange in its address): "channel" for `W + pid % C` (instance norm, GroupNorm with one
        group per channel), "program" for `W + pid` (batch norm: a feature per program)."""
        g = self.g
        if not weights:
            return None
        kinds = set()
        for w in weights:
            addr = g.node(w)[1]
            names = g.call_names(addr)
            if "arange" in names or "program_id" not in names:
                return None
            nodes = g.walk([addr], into_pointers=False)
            if any(g.kind(n) == "var" for n in nodes):
                return None   # a loop variable walks the channels (`W + grp * cpg + ch`)
            kinds.add("channel" if any(g.kind(n) == "other" and g.node(n)[1] == "Mod" for n in nodes) else "program")
        return "channel" if kinds == {"channel"} else "program"

    def _norm_products(self, outputs: set[int]) -> list[tuple[int, tuple[int, ...]]]:
        """(node, factors) of the products a kernel writes out: each stored product, and a
        stored product one of whose factors is a constexpr branch of products, read per branch
        (`y = x * rstd * w if AFFINE else x * rstd; y = y * (1 + scale)`)."""
        cached = self.__dict__.get("_norm_products_list")
        if cached is not None:
            return cached
        g = self.g
        out: list[tuple[int, tuple[int, ...]]] = []
        for m in self.of_kind("mul"):
            if m not in outputs:
                continue
            f = g.factors(m)
            out.append((m, f))
            for h in set(f):
                if g.kind(h) != "phi":
                    continue
                rest = _without(list(f), h)
                for alt in g.node(h)[1:]:
                    out.append((alt, tuple(g.factors(alt)) + tuple(rest)))
        self.__dict__["_norm_products_list"] = out
        return out

    def _gemma_weight(self, f: tuple[int, ...], x: int, r: int) -> bool:
        """A factor `1 + w` (or `w + 1.0`) with w loaded by columns only: Gemma's RMSNorm."""
        g = self.g
        one = g.find(("const", 1.0))
        for y in f:
            if y in (x, r) or g.kind(y) != "add" or one not in g.node(y)[1:]:
                continue
            rest = [t for t in g.node(y)[1:] if t != one]
            if len(rest) == 1 and g.kind(rest[0]) == "load":
                if not self._row_indexed(g.node(rest[0])[1]):
                    return True
        return False

    def _row_indexed(self, addr: int) -> bool:
        """An address that moves with the row: a loaded index, or the program id scaled by a
        stride (`Scale + row // rows_per_mod * stride + cols`). A pointer merely chosen by the
        program id (`tl.where(is_q, qw, kw)`) is still a per-column weight."""
        g = self.g
        return bool(g.value_loads(addr)) or any(
            g.kind(n) == "mul" and "program_id" in g.call_names(n) for n in g.walk([addr], into_pointers=False))

    def norm_scaled_by_row_tensor(self, group_weights: bool = False) -> bool:
        """A stored product of the normalised values (a factor built from the reciprocal root)
        and a tensor loaded per row (a gate), or `1 + scale` with scale loaded per row (AdaLN), or
        a per-row tensor added to them after the norm (a residual epilogue)."""
        g = self.g
        one = g.find(("const", 1.0))
        for n in self.live:
            if g.kind(n) not in ("mul", "add"):
                continue
            # a product with the normalised values, or a sum of them and another tensor
            # (`rms(x) * w + residual`: the residual added after the norm)
            f = g.factors(n) if g.kind(n) == "mul" else g.node(n)[1:]
            normed = [y for y in f if g.is_call(y, "rsqrt") or "rsqrt" in g.call_names(y)
                      or (g.is_call(y, "sqrt") or "sqrt" in g.call_names(y))]
            if not normed:
                continue
            sources = set()
            for y in normed:
                sources |= set(self.loads(y))
            for y in f:
                if y in normed:
                    continue
                cand = [y]
                if g.kind(y) == "add" and one is not None and one in g.node(y)[1:]:
                    cand = [t for t in g.node(y)[1:] if t != one]
                for c in [ld for c0 in cand for ld in self._loads_through_phi(c0)]:
                    if g.kind(c) == "load" and c not in sources and self._row_indexed(g.node(c)[1]) \
                            and not self._repeats_over_rows(g.node(c)[1]) \
                            and not any(self.same_data(c, s) or (group_weights and self._per_channel_weight(c, s))
                                        for s in sources):
                        return True
        return False

    def _computed_input(self, x: int) -> bool:
        """The normalised value is computed from several loaded tensors by more than a residual
        add: `residual + update * scale`, a weighted sum of streams (`sum_c x_c * p_c`)."""
        g = self.g
        node = g.node(g.unmask(x))
        if node[0] == "phi":   # a loop-carried accumulator or a constexpr branch: any alternative
            alts = [alt for alt in node[1:] if isinstance(alt, int)]
            loaded = [alt for alt in alts if g.kind(alt) == "load"]
            if len(loaded) >= 2 and len({frozenset(_bases(g, g.node(a)[1])) for a in loaded}) >= 2:
                return True    # one of several tensors, chosen per program: several norms in one launch
            return any(self._computed_input(alt) for alt in alts)
        if node[0] != "add":
            return False
        def loads_in(t: int) -> int:   # through calls whose operands the value summary skips (inline asm)
            return sum(1 for n in g.walk([t], into_pointers=False) if g.kind(n) == "load")
        return any(loads_in(t) >= 2 or g.is_call(t, "inline_asm_elementwise") for t in node[1:])

    def _repeats_over_rows(self, addr: int) -> bool:
        """An address whose row index goes through `%` (`W + (row % G) * D + cols`): a weight
        per group of rows, not a per-row gate."""
        g = self.g
        return any(g.kind(n) == "other" and g.node(n)[1] == "Mod" for n in g.walk([addr], into_pointers=False))

    def _gated_by_a_row_tensor(self, f: tuple[int, ...], x: int, r: int) -> bool:
        """Another factor of the stored product is a tensor loaded per row, like x itself (not a
        per-column weight): `rms(x) * w * gate`, a gated norm Liger does not ship."""
        g = self.g
        return any(y not in (x, r) and g.kind(y) == "load" and not self.same_data(y, x)
                   and self._row_indexed(g.node(y)[1]) for y in f)

    def _modulated(self, f: tuple[int, ...], x: int, r: int) -> bool:
        """A factor `1 + scale` where scale is loaded per row (its address follows the program
        id or a loaded index): AdaLN modulation. `1 + w` with `w` indexed by columns only is
        Gemma's RMSNorm weight, not a modulation."""
        g = self.g
        one = g.find(("const", 1.0))
        for y in f:
            if y in (x, r) or g.kind(y) != "add" or one not in g.node(y)[1:]:
                continue
            rest = [t for t in g.node(y)[1:] if t != one]
            if len(rest) != 1 or g.kind(rest[0]) != "load":
                continue
            if self._row_indexed(g.node(rest[0])[1]):
                return True   # `Scale + row // rows_per_mod * stride + cols`, or gathered by an index
        return False

    def _gated_elsewhere(self, m: int, outputs: set[int]) -> bool:
        """The norm product m (or m plus a bias) is also stored multiplied by an activation of
        another input: the kernel is a gated norm whose gate a constexpr can switch off."""
        g = self.g
        holders = {m}
        grown = True
        while grown:   # m, m + bias, a constexpr branch holding either (`b_y` after `if HAS_BIAS:`)
            grown = False
            for a in self.live:
                if a not in holders and g.kind(a) in ("add", "phi") and any(c in holders for c in g.node(a)[1:]):
                    holders.add(a)
                    grown = True
        for p in outputs:
            if g.kind(p) != "mul" or p == m:
                continue
            f = g.factors(p)
            inside = [h for h in holders if h in f]
            rest = [x for x in f if x not in holders]
            if not inside and set(g.factors(m)) < set(f):
                rest = [x for x in f if x not in g.factors(m)]   # products are flattened: m's factors are p's
                inside = [m]
            if inside and any(not g.call_names(x).isdisjoint(FUSED_WORK) for x in rest):
                return True
        return False

    def _loads_through_phi(self, w: int) -> list[int]:
        """w itself when it is a load; the loads among a constexpr branch's alternatives
        (`weight = 1 if W is None else tl.load(W + c)`)."""
        node = self.g.node(w)
        if node[0] == "load":
            return [w]
        if node[0] == "phi":
            return [v for v in node[1:] if self.g.kind(v) == "load"]
        return []

    def _per_channel_weight(self, w: int, x: int) -> bool:
        """The affine weight w is indexed per channel while x is indexed per element: the
        GroupNorm layout. Either the weight's index divides the element offsets
        (`W + offs // HW`), or a channel index that x's address scales by a stride
        (`c * HW + hw`) is the weight's index, with x's own elements (`hw`) not in it."""
        g = self.g
        w_addr = g.node(w)[1]
        x_addrs = [g.node(ld)[1] for ld in self.loads(x)]
        if not x_addrs or not any("arange" in g.call_names(a) for a in x_addrs):
            return False
        w_nodes = g.walk([w_addr], into_pointers=False)
        if any(g.kind(n) == "other" and g.node(n)[1] == "FloorDiv" for n in w_nodes):
            return True
        w_terms = [t for t in _terms(g, w_addr) if g.kind(t) != "param" and g.kind(t) != "const"]
        for xa in x_addrs:
            bare = set(_terms(g, xa))
            # x's own element offsets (`hw`): an arange term sharing no arange with the weight
            own = [t for t in bare if "arange" in g.call_names(t)
                   and not any(g.is_call(n, "arange") for n in g.walk([t], into_pointers=False) & w_nodes)]
            if not own:
                continue
            scaled = self._scaled_parts(xa)
            if any(t in scaled and t not in bare and self._spans_channels(t) for t in w_terms):
                return True
        return False

    def _spans_channels(self, t: int) -> bool:
        """t ranges over several channels in one program (an arange or a loop variable), unlike a
        row index from program_id (`S + row`: one scale per row is not a per-channel weight)."""
        g = self.g
        return "arange" in g.call_names(t) or any(g.kind(n) == "var" for n in g.walk([t], into_pointers=False))

    def _scaled_parts(self, addr: int) -> set[int]:
        """Nodes under a product of two non-constant factors in an address (`(n*C + c) * HW`)."""
        g = self.g
        out: set[int] = set()
        for m in g.walk([addr], into_pointers=False):
            if g.kind(m) != "mul":
                continue
            f = [x for x in g.factors(m) if g.kind(x) != "const"]
            if len(f) >= 2:
                out |= g.walk(f, into_pointers=False)
        return out

    # ---- ReLU^2 ---------------------------------------------------------------------------
    def relu_squared(self) -> bool:
        """relu(x) * relu(x) stored as it is (not plus a bias), relu spelled max(x, 0) or
        where(x > 0, x, 0), x loaded."""
        g = self.g
        outputs = self._stored_directly()
        zero = g.find(("const", 0.0))
        if zero is None:
            return False
        for m in self.of_kind("mul"):
            f = g.factors(m)
            if m not in outputs or len(f) != 2 or f[0] != f[1]:
                continue
            node = g.node(f[0])
            if node[0] == "call" and node[1] == "maximum" and len(node) == 4:
                args = node[2:]
                if zero in args and any(g.kind(a) == "load" for a in args if a != zero):
                    return True
            if node[0] == "call" and node[1] == "where" and len(node) == 5:
                cond, a, b = g.node(node[2]), node[3], node[4]
                if (b == zero and g.kind(a) == "load" and cond[0] == "cmp" and cond[1] in (">", ">=")
                        and cond[2] == a and cond[3] == zero):
                    return True
        return False

    # ---- sparsemax ---------------------------------------------------------------------------
    def sparsemax(self) -> bool:
        """max(x - tau, 0) stored, with the threshold tau computed from a cumulative sum (or a
        sort) of the row: sparsemax's projection onto the simplex."""
        g = self.g
        zero = g.find(("const", 0.0))
        for v in self._stored_directly():
            node = g.node(v)
            if zero is None or node[0] != "call" or node[1] != "maximum" or len(node) != 4 or zero not in node[2:]:
                continue
            others = [a for a in node[2:] if a != zero]
            if len(others) != 1:
                continue
            d = g.node(others[0])
            threshold_ops = {"cumsum", "sort"}
            if (d[0] == "sub" and self.loads(d[1]) and not g.call_names(d[1]) & threshold_ops
                    and g.call_names(d[2]) & threshold_ops):
                return True
        return False

    # ---- DyT ------------------------------------------------------------------------------
    def dyt(self) -> bool:
        """gamma * tanh(alpha * x) (+ beta) stored, alpha a scalar load, x and gamma vectors from
        two other tensors. A soft-cap (`cap * tanh(x / cap)`) divides and is not matched."""
        g = self.g
        outputs = self._output_closure()
        for m in self.of_kind("mul"):
            if m not in outputs:
                continue
            f = g.factors(m)
            tanhs = [t for t in f if g.is_call(t, "tanh")]
            rest = [x for x in f if x not in tanhs]
            if len(tanhs) != 1 or len(rest) != 1 or g.kind(rest[0]) != "load":
                continue
            inner = [x for x in g.factors(self.arg(tanhs[0])) if g.kind(x) != "const"]
            if len(inner) != 2 or any(g.kind(x) != "load" for x in inner):
                continue
            vectors = [x for x in (*inner, rest[0]) if "arange" in g.call_names(g.node(x)[1])]
            scalars = [x for x in inner if "arange" not in g.call_names(g.node(x)[1])]
            if len(vectors) == 2 and len(scalars) == 1 and len({frozenset(self.sources(v)) for v in vectors}) == 2:
                return True
        return False

    def _is_residual_sum(self, x: int) -> bool:
        node = self.g.node(x)
        if node[0] != "add":
            return False
        with_loads = [t for t in node[1:] if self.loads(t)]
        return len(with_loads) >= 2 and len({self.loads(t) for t in with_loads}) >= 2

    # ---- gated activations -----------------------------------------------------------------
    def gated(self) -> set[str]:
        found: set[str] = set()
        outputs = self._output_closure()
        for m in self.of_kind("mul"):
            if m not in outputs:
                continue   # an activation that feeds a norm or a reduction is not the result
            f = list(self.g.factors(m))
            for s in f:
                if not self.g.is_call(s, "sigmoid", "tanh", "erf") and not self._has_gelu_term(s):
                    continue
                rest = list(f)
                rest.remove(s)
                if self.g.is_call(s, "sigmoid") and self._swish_of(s, rest):
                    found.add("swiglu")
                    continue
                for gate in set(rest):
                    if self.loads(gate) and self._gelu_of(s, gate) and self._up_besides(rest, [gate]):
                        found.add("geglu")
                        if self._exact_gelu(s, gate):
                            self.__dict__["geglu_exact"] = True
        return found

    def _swish_of(self, s: int, rest: list[int]) -> bool:
        """rest holds every factor of the sigmoid's argument (silu(g) = g * sigmoid(g), with g
        itself possibly a product such as `a * gate_multiplier`) plus an `up` with other loads."""
        gate_factors = list(self.g.factors(self.arg(s)))
        pool = list(rest)
        for x in gate_factors:
            if x not in pool:
                return False
            pool.remove(x)
        if any(not self.g.call_names(x).isdisjoint(GATE_FORBIDS) for x in gate_factors):
            return False   # silu(exp(A) * g): a gate computed from a transformed parameter, not an input
        return bool(self.loads(self.arg(s))) and self._up_besides(pool, gate_factors)

    def _up_besides(self, pool: list[int], gate_factors: list[int]) -> bool:
        """Some factor besides the gate carries other loaded data elementwise (the `up`). An up
        that went through a row reduction is a normalised or reduced value: `norm(x) * silu(z)`
        is a gated norm and `sum(state * C) * silu(z)` a gated scan output, not SwiGLU."""
        gate_loads = frozenset().union(*(self.loads(x) for x in gate_factors))
        others = [u for u in pool if u not in gate_factors]
        if any(not self.g.call_names(u).isdisjoint(REDUCTIONS) for u in others):
            return False   # a factor such as rsqrt(var): the product scales a normalised row
        return any(self.loads(u) - gate_loads for u in others)

    def _has_gelu_term(self, s: int) -> bool:
        return self.contains_call(s, "tanh", "erf", "sigmoid")

    def _exact_gelu(self, s: int, gate: int) -> bool:
        """The GELU factor is the exact erf form (no tanh or sigmoid approximation)."""
        names = self.g.call_names(s)
        return "erf" in names and not names & {"tanh", "sigmoid"}

    def _gelu_of(self, s: int, gate: int) -> bool:
        """s is the GELU factor of gate: 1 + tanh(k*(g + c*g^3)), 1 + erf(g/sqrt2), or the
        sigmoid form sigmoid(k*(g + c*g^3))."""
        for t in self.g.walk([s], into_pointers=False):
            if not self.g.is_call(t, "tanh", "erf", "sigmoid"):
                continue
            arg = self.arg(t)
            inner = self.g.walk([arg, self.g.expand(arg)], into_pointers=False)
            if any(cube_part(self.g, x, gate) for x in inner):
                return True
            if self.g.is_call(t, "erf"):
                f = self.g.factors(arg)
                if gate in f and all(self.g.kind(x) in ("const", "var", "param") for x in f if x != gate):
                    return True
        return False

    # ---- softmax, cross-entropy ------------------------------------------------------------
    def _exp_of_shifted(self, e: int) -> bool:
        """exp(x - max) (the scale of an exp2 form is folded away)."""
        for t in self.g.walk([self.arg(e)], into_pointers=False):
            node = self.g.node(t)
            if node[0] == "sub" and self.contains_call(node[2], "max", "maximum") and self.loads(node[1]) | self._dots(node[1]):
                return True
        return False

    def _dots(self, n: int) -> frozenset[int]:
        return frozenset(m for m in self.g.walk([n], into_pointers=False) if self.g.is_call(m, "dot"))

    def _stored_directly(self) -> set[int]:
        """Values written as they are (or under a mask `where`): what a kernel outputs, as opposed
        to what only feeds a later reduction, argmax or sampling step."""
        out = set()
        for st in self.g.stores:
            out.add(st.value)
            node = self.g.node(st.value)
            if node[0] == "call" and node[1] == "where" and len(node) == 5:
                out.update(node[3:5])
            if node[0] == "phi":
                out.update(node[1:])
        return out

    def softmax(self) -> bool:
        stored = self._stored_directly()
        for m in self.of_kind("mul"):
            if m not in stored:
                continue
            f = self.g.factors(m)
            recips = [x for x in f if self.g.kind(x) == "recip" and self.contains_call(self.g.node(x)[1], "sum")
                      and self.contains_call(self.g.node(x)[1], "exp")]
            exps = [x for x in f if self.g.is_call(x, "exp") and self._exp_of_shifted(x)]
            if recips and exps:
                return True
        return False

    def _lse_nodes(self) -> list[int]:
        """log(sum(exp(...))): a logsumexp. A log of a ratio (`log(hi / lo)` with a sum of
        exps under the division) is not one."""
        out = []
        for n in self.calls("log"):
            arg = self.arg(n)
            if not (self.contains_call(arg, "sum") and self.contains_call(arg, "exp")):
                continue
            if any(self.g.kind(f) == "recip" for f in self.g.factors(arg)):
                continue
            out.append(n)
        return out

    def _onehot_compares(self) -> list[int]:
        """`cols == target` where target is loaded and cols is an arange (target gather)."""
        out = []
        for c in self.of_kind("cmp"):
            _, op, a, b = self.g.node(c)
            if op != "==":
                continue
            for idx, tgt in ((a, b), (b, a)):
                if self.contains_call(idx, "arange") and self.loads(tgt) and not self.loads(idx):
                    out.append(c)
        return out

    def _gathers(self) -> set[int]:
        """Values picked at the target: loads whose address holds a loaded index, and
        where(cols == target, x, ...)."""
        out = set()
        for ld in self.of_kind("load"):
            ptr = self.g.node(ld)[1]
            if self.loads(ptr):
                out.add(ld)
        onehot = set(self._onehot_compares())
        for w in self.calls("where"):
            if self.g.node(w)[2] in onehot:
                out.add(w)
        return out

    def cross_entropy(self) -> str | None:
        lses = self._lse_nodes()
        if not lses:
            return None
        # the logit at the target is loaded apart from the row the logsumexp reduces: `x - lse`
        # over that same row is a log-softmax (its rows may be mapped through an index)
        row_loads = frozenset().union(*(self.loads(self.arg(l)) for l in lses))
        row_sources = frozenset().union(*(_bases(self.g, self.g.node(ld)[1]) for ld in row_loads))
        inside_lse = self.g.walk(lses, into_pointers=False)
        # ... from the same logits tensor, and not itself a term of the logsumexp (a maximum
        # picked through an argmax index to rescale partial sums is not a target logit)
        gathers = {n for n in self._gathers() if n not in row_loads and n not in inside_lse
                   and (self.g.kind(n) != "load" or _bases(self.g, self.g.node(n)[1]) & row_sources)}
        onehot = self._onehot_compares()
        linked = False
        values = self._value_reach()
        for s, left, right in self._differences():
            if s not in values:
                continue   # a log-probability only compared with thresholds (sampling), not a loss
            walk_l = self.g.walk([left], into_pointers=False)
            walk_r = self.g.walk([right], into_pointers=False)
            if any(l in walk_l for l in lses) and (gathers & walk_r):
                linked = True
                break
        if not linked:
            linked = self._lse_minus_gather(lses, gathers)
        if not linked and onehot:
            # the gradient form: softmax - onehot(target), written with the compare
            linked = any(self.g.node(w)[2] in onehot for w in self.calls("where"))
        if not linked:
            return None
        logits_from_dot = any(self._dots(self.arg(l)) for l in lses)
        return "fused_linear_cross_entropy" if logits_from_dot else "cross_entropy"

    def _value_reach(self) -> set[int]:
        """Nodes whose values reach memory as data: walked from the stored values, not into
        comparisons, the condition of a `where`, load addresses, or an `exp` (a log-probability
        turned back into a probability is sampling or acceptance math, not a loss)."""
        cached = self.__dict__.get("_value_reach_set")
        if cached is not None:
            return cached
        g = self.g
        seen: set[int] = set()
        stack = [st.value for st in g.stores]
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            node = g.node(n)
            if node[0] in ("cmp", "load") or (node[0] == "call" and node[1] == "exp"):
                continue
            if node[0] == "call" and node[1] == "where" and len(node) == 5:
                stack.extend(node[3:5])
                continue
            stack.extend(g.children(n))
        self.__dict__["_value_reach_set"] = seen
        return seen

    def _lse_minus_gather(self, lses: list[int], gathers: set[int]) -> bool:
        """`loss = -x[target]` (maybe rescaled under constexpr branches: label smoothing, a
        softcap) and later `loss += lse`: a sum holding the lse and a negated term, or a branch
        of negated terms, that holds the gathered logit."""
        g = self.g
        minus = g.find(("const", -1.0))
        if minus is None or not gathers or not lses:
            return False

        def negated_gather(t: int, depth: int = 0) -> bool:
            node = g.node(t)
            if node[0] == "mul" and minus in node[1:]:
                return bool(gathers & g.walk([t], into_pointers=False))
            if node[0] in ("phi", "add") and depth < 3:
                return any(negated_gather(c, depth + 1) for c in node[1:])
            return False

        lse_set = set(lses)
        values = self._value_reach()
        for a in self.of_kind("add"):
            if a not in values:
                continue
            terms = g.node(a)[1:]
            with_lse = [t for t in terms if lse_set & g.walk([t], into_pointers=False)]
            if with_lse and any(negated_gather(t) for t in terms if t not in with_lse):
                return True
        return False

    def policy_ratio(self) -> bool:
        """exp(logp - old_logp) with logp from a logsumexp: a GRPO/PPO-style policy loss, which
        contains a log-softmax but is not a cross-entropy."""
        lses = set(self._lse_nodes())
        for e in self.calls("exp"):
            arg = self.g.node(self.arg(e))
            if arg[0] != "sub":
                continue
            _, a, b = arg
            walk_a = self.g.walk([a], into_pointers=False)
            if lses & walk_a and self.loads(b) - self.loads(a):
                return True
            # exp(ref_logp - logp), the k3 KL estimator against a reference policy, with
            # logp = x - lse written out (a probability at the target, exp(x - lse), is not one)
            right = self.g.node(b)
            if (right[0] == "sub" and lses & self.g.walk([right[2]], into_pointers=False)
                    and self.loads(a) and not self.loads(a) & self.loads(b)):
                return True
        return False

    # ---- divergences -------------------------------------------------------------------------
    def _log_of(self, lg: int, p: int) -> bool:
        """lg is log(p), log(max(p, eps)) or log(p + eps)."""
        if not self.g.is_call(lg, "log"):
            return False
        inner = self.arg(lg)
        if inner == p:
            return True
        node = self.g.node(inner)
        return (node[0] == "add" or (node[0] == "call" and node[1] == "maximum")) and p in self.g.children(inner)

    def kl_div(self) -> bool:
        for m in self.of_kind("mul"):
            f = self.g.factors(m)
            for p in f:
                if not self.loads(p):
                    continue
                for d in f:
                    node = self.g.node(d)
                    if d == p:
                        continue
                    if node[0] == "sub":
                        _, left, right = node
                        if self._log_of(left, p) and self.loads(right) - self.loads(p):
                            return True            # p * (log p - log q)
                        if self.g.is_call(p, "exp") and left == self.arg(p) and self.loads(right) - self.loads(left):
                            return True            # exp(t) * (t - log q): log-space target
                    if self.g.is_call(d, "log"):
                        inner = self.arg(d)
                        if p in self.g.factors(inner) and any(self.g.kind(x) == "recip" for x in self.g.factors(inner)):
                            return True            # p * log(p / q)
        return False

    def _mixture(self, mx: int) -> bool:
        """0.5 * (p + q), (p + q) / 2, or beta * p + (1 - beta) * q (possibly max-shifted)."""
        node = self.g.node(mx)
        if node[0] == "mul":
            halves = [x for x in node[1:] if self.is_const(x, 0.5)]
            sums = [x for x in node[1:] if self.g.kind(x) == "add"]
            if halves and sums and self._two_distributions(self.g.node(sums[0])[1:]):
                return True
        if node[0] == "add" and len(node) == 3:
            parts = []
            for t in node[1:]:
                f = self.g.factors(t)
                weights = [x for x in f if not self.loads(x)]
                dist = [x for x in f if self.loads(x)]
                if not weights or len(dist) != 1:
                    return False
                parts.append(dist[0])
            return self._two_distributions(parts)
        return False

    def _two_distributions(self, terms) -> bool:
        if len(terms) != 2 or terms[0] == terms[1]:
            return False
        a, b = (self.loads(t) for t in terms)
        return bool(a) and bool(b)

    def jsd(self) -> bool:
        return any(self._mixture(self.arg(lg)) for lg in self.calls("log"))

    def tvd(self) -> bool:
        for m in self.of_kind("mul"):
            f = self.g.factors(m)
            if not any(self.is_const(x, 0.5) for x in f):
                continue
            for a in f:
                if self.g.is_call(a, "abs"):
                    inner = self.g.node(self.arg(a))
                    if inner[0] == "sub" and self._two_distributions(inner[1:]):
                        return True
                elif (self.g.kind(a) == "phi" or self.g.is_call(a, "sum")) and "abs" in self.g.call_names(a):
                    # 0.5 * (a row sum of |p - q| accumulated over blocks)
                    for t in self.g.walk([a], into_pointers=False):
                        if self.g.is_call(t, "abs"):
                            inner = self.g.node(self.arg(t))
                            if inner[0] == "sub" and self._two_distributions(inner[1:]):
                                return True
        return False

    # ---- rope ------------------------------------------------------------------------------
    def _angle(self, n: int) -> bool:
        if self.g.functor:
            # four plain inputs (ar, ai, br, bi) are a complex multiply; a functor RoPE computes
            # its angle
            return self.contains_call(n, "cos", "sin")
        return bool(self.loads(n)) or self.contains_call(n, "cos", "sin")

    def _differences(self) -> list[tuple[int, int, int]]:
        """(node, left, right) for every `left - right` the kernel computes, spelled as a
        subtraction or as a sum with one negated term (`tl.fma(-x2, sin, x1 * cos)`,
        `loss = -x[target]; loss += lse + z_loss`)."""
        cached = self.__dict__.get("_differences_list")
        if cached is not None:
            return cached
        g = self.g
        minus = g.find(("const", -1.0))
        out = [(s, g.node(s)[1], g.node(s)[2]) for s in self.of_kind("sub")]
        if minus is None:
            return out
        for a in self.of_kind("add"):
            terms = list(g.node(a)[1:])
            if len(terms) > 6:
                continue
            negated = [t for t in terms if minus in g.factors(t)]
            if len(negated) == 1:
                right = g.mul(*_without(list(g.factors(negated[0])), minus))
                left = g.add(*_without(terms, negated[0]))
                out.append((a, left, right))
        cached = out
        self.__dict__["_differences_list"] = cached
        return out

    def rope(self) -> str | None:
        """x1*cos - x2*sin stored beside x2*cos + x1*sin (x1, x2 may be products themselves):
        "rope", or "qwen2vl_mrope" when cos and sin are assembled from three or more sections of
        one table (Qwen2-VL's temporal / height / width multimodal RoPE). The rotate-half form
        that loads each element's partner (`x*cos + x_partner*sign*sin`) is read too."""
        g = self.g
        reduced = self._reduced()
        for s, left, right in self._differences():
            if s in reduced:
                continue   # summed afterwards: a complex dot product, not a rotation that is stored
            lf, rf = list(g.factors(left)), list(g.factors(right))
            if len(lf) < 2 or len(rf) < 2:
                continue
            for c in set(lf):
                a = _without(lf, c)
                for sn in set(rf):
                    b = _without(rf, sn)
                    if self._rotation(a, b, c, sn):
                        # which factor is the angle is symmetric in a product: ask both sides
                        sectioned = [x for x in (*lf, *rf) if self._sectioned(x)]
                        return "qwen2vl_mrope" if len(sectioned) >= 2 else "rope"
        if self._partner_rotation():
            return "rope"
        return None

    def _signed(self, n: int) -> int | None:
        """y when n is `where(cond, y, -y)` or `where(cond, -y, y)` (a per-lane sign flip)."""
        g = self.g
        node = g.node(n)
        if node[0] == "phi":   # each constexpr layout flips its own lanes
            inner = [self._signed(a) for a in node[1:]]
            return g.phi(*inner) if all(i is not None for i in inner) else None
        if node[0] != "call" or node[1] != "where" or len(node) != 5:
            return None
        a, b = node[3], node[4]
        if g.neg(a) == b or g.neg(b) == a:
            return a if g.neg(a) == b else b
        return None

    def _is_sign_vector(self, n: int) -> bool:
        """`where(cond, -1.0, 1.0)` (or the reverse): a sign chosen per lane."""
        node = self.g.node(n)
        if node[0] != "call" or node[1] != "where" or len(node) != 5:
            return False
        return {self.g.node(x) for x in node[3:5]} == {("const", 1.0), ("const", -1.0)}

    def _partner_rotation(self) -> bool:
        """`x * cos + partner * sin` stored, with partner the same tensor at the rotated index
        and a per-lane sign on partner or sin: rotate-half RoPE with its partner loaded directly.
        x and partner may be products themselves (`normed * cos + sign * partner_normed * sin`)."""
        g = self.g
        for v in self._output_closure():
            node = g.node(v)
            if node[0] != "add" or len(node) != 3:
                continue
            for t1, t2 in ((node[1], node[2]), (node[2], node[1])):
                f1, f2 = list(g.factors(t1)), list(g.factors(t2))
                if len(f1) < 2 or len(f2) < 2:
                    continue
                if not any(self._signed(y) is not None or self._is_sign_vector(y) for y in f2):
                    continue
                f2 = [self._signed(y) or y for y in f2 if not self._is_sign_vector(y)]
                for c in set(f1):
                    x = _without(f1, c)
                    xs = frozenset().union(*(self.sources(t) for t in x))
                    if not self._angle(c) or not xs or self.sources(c) & xs:
                        continue
                    for sn in set(f2):
                        if sn == c or not self._angle(sn):
                            continue
                        partner = _without(f2, sn)
                        ps = frozenset().union(*(self.sources(t) for t in partner))
                        if ps == xs and sorted(partner) != sorted(x) and not self.sources(sn) & xs:
                            return True
        return False

    def _reduced(self) -> set[int]:
        """Nodes whose values flow into a row sum."""
        cached = self.__dict__.get("_reduced_set")
        if cached is None:
            roots = [self.arg(n) for n in self.calls("sum") if len(self.g.node(n)) > 2]
            cached = self.g.walk(roots, into_pointers=False) if roots else set()
            self.__dict__["_reduced_set"] = cached
        return cached

    def _sectioned(self, n: int) -> bool:
        """n sums or selects (`where`) three or more loads of one table: t_cos + h_cos + w_cos."""
        g = self.g
        picked: list[int] = []
        stack = [n]
        while stack and len(picked) < 16:
            m = stack.pop()
            node = g.node(m)
            if node[0] == "add":
                stack.extend(node[1:])
            elif node[0] == "call" and node[1] == "where" and len(node) == 5:
                stack.extend(node[3:5])
            elif node[0] == "load":
                picked.append(m)
        if len(set(picked)) < 3:
            return False
        common = set.intersection(*(_bases(g, g.node(ld)[1]) for ld in picked))
        return bool(common)   # one table (`COS + plane + offs` also names `plane`)

    def _rotation(self, a: list[int], b: list[int], c: int, sn: int) -> bool:
        g = self.g
        if sorted(a) == sorted(b) or c == sn:
            return False
        la = frozenset().union(*(self.loads(x) for x in a))
        lb = frozenset().union(*(self.loads(x) for x in b))
        if not la or not lb or not (self._angle(c) and self._angle(sn)):
            return False
        if la & self.loads(c) or lb & self.loads(sn):
            return False
        bc = g.find(("mul", *sorted([*b, c])))
        as_ = g.find(("mul", *sorted([*a, sn])))
        if bc is None or as_ is None:
            return False
        partner = g.find(("add", *sorted((bc, as_))))
        if partner is None or partner not in self.live:
            return False
        if len(la) == 1 and len(lb) == 1 and self._interleaved(next(iter(la)), next(iter(lb))):
            self.__dict__["rope_interleaved"] = True
        return True

    def _rotations(self) -> list[tuple[int, int, int, int]]:
        """(x1, x2, cos, sin) loads of every stored rotation `x1*cos - x2*sin` beside
        `x2*cos + x1*sin` in which each of the four is one load (a cast aside): the rotations
        `rope()` reads, spelled out per rotated tensor."""
        g = self.g
        reduced = self._reduced()
        out: list[tuple[int, int, int, int]] = []

        def one_load(xs: list[int]) -> int | None:
            got = frozenset().union(*(self.loads(x) for x in xs)) if xs else frozenset()
            return next(iter(got)) if len(got) == 1 else None

        for s, left, right in self._differences():
            if s in reduced:
                continue
            lf, rf = list(g.factors(left)), list(g.factors(right))
            if len(lf) != 2 or len(rf) != 2:
                continue
            for c in set(lf):
                a = _without(lf, c)
                for sn in set(rf):
                    b = _without(rf, sn)
                    if not self._rotation(a, b, c, sn):
                        continue
                    got = (one_load(a), one_load(b), one_load([c]), one_load([sn]))
                    if None not in got and len(set(got)) == 4 and got not in out:
                        out.append(got)   # type: ignore[arg-type]
        return out

    def _pair_order(self, first: int, second: int) -> bool:
        """`second` reads the element after `first` in the same tensor: its address is first's
        plus one more term (`+ 1`, `+ stride_dim`), so first is the real part and second the
        imaginary part of an interleaved complex pair."""
        g = self.g
        a, b = g.node(first)[1], g.node(second)[1]
        if a == b or g.value_loads(a) or g.value_loads(b):
            return False
        ba, bb = _bases(g, a), _bases(g, b)
        if not ba or not ba <= bb:   # `X + stride_dim` names the stride parameter as a base too
            return False
        ta, tb = list(_terms(g, a)), list(_terms(g, b))
        rest = list(tb)
        for t in ta:
            if t not in rest:
                return self._doubled_pair(ta, tb)
            rest.remove(t)
        return len(rest) == 1

    def _doubled_pair(self, ta: list[int], tb: list[int]) -> bool:
        """`X + 2*i` against `X + (2*i + 1)`: the one differing term of second is first's term
        plus one more summand."""
        g = self.g
        da = [t for t in ta if t not in tb]
        db = [t for t in tb if t not in ta]
        if len(da) != 1 or len(db) != 1:
            return False
        inner_b = list(_terms(g, db[0]))
        inner_a = list(_terms(g, da[0]))
        rest = list(inner_b)
        for t in inner_a:
            if t not in rest:
                return False
            rest.remove(t)
        return len(rest) == 1

    def complex_rope_qk(self) -> bool:
        """Llama-4's RoPE as Liger's `llama4_rope` computes it: each rotated tensor is read as
        interleaved complex pairs (x[2i] real, x[2i+1] imaginary) and multiplied by freqs_cis read
        as its real view (cos = freqs[..., 0], sin = freqs[..., 1] of one tensor), forward
        (x[2i] * cos - x[2i+1] * sin at the real slot), for two tensors (q and k) with the same
        frequencies, none of them read through a loaded index (positions). Anything else (one
        tensor, cos and sin in separate tables, the inverse rotation, rotate-half pairs) is not
        the form Liger's op takes."""
        rots = self._rotations()
        if len(rots) < 2:
            return False
        by_tensor: dict[frozenset[int], tuple[int, int]] = {}
        for x1, x2, c, sn in rots:
            if not self._interleaved(x1, x2) or self._interleaved(c, sn):
                continue   # the same products read with the factors' roles swapped
            if not (self._pair_order(x1, x2) and self._pair_order(c, sn)):
                return False   # the imaginary part first (an inverse rotation) or not interleaved
            base = frozenset(_bases(self.g, self.g.node(x1)[1]))
            if base & _bases(self.g, self.g.node(c)[1]):
                return False
            by_tensor.setdefault(base, (c, sn))
        freqs = set(by_tensor.values())
        if len(by_tensor) < 2 or len(freqs) != 1:
            return False
        if len({frozenset(_bases(self.g, self.g.node(c)[1])) for c, _ in freqs}) != 1:
            return False
        return True

    def interleaved_loads(self) -> bool:
        """Two live loads of one tensor at neighbouring doubled indices (x[2i], x[2i+1]): the
        rotation, however it is spelled (fma, q and k in one kernel), pairs interleaved lanes."""
        g = self.g
        loads = [(n, _bases(g, g.node(n)[1])) for n in sorted(self.live) if g.kind(n) == "load"]
        return any(ba & bb and self._interleaved(a, b)
                   for i, (a, ba) in enumerate(loads) for b, bb in loads[i + 1:])

    def _interleaved(self, la: int, lb: int) -> bool:
        """The two rotated values are neighbours (x[2i], x[2i+1]): both addresses scale the
        element index by 2 and differ in one term (the +1 or the element stride)."""
        g = self.g
        a, b = g.node(la)[1], g.node(lb)[1]
        if a == b:
            return False
        two = g.find(("const", 2.0))
        if two is None:
            return False

        def doubled(addr: int) -> bool:
            return any(g.kind(n) == "mul" and two in g.node(n)[1:] and "arange" in g.call_names(n)
                       for n in g.walk([addr], into_pointers=False))
        return doubled(a) and doubled(b)


def _without(items: list[int], x: int) -> list[int]:
    out = list(items)
    out.remove(x)
    return out


def cube_part(g: KernelGraph, x: int, gate: int) -> bool:
    """x is c * g * g * g (the cubic term of tanh-GELU)."""
    return g.factors(x).count(gate) == 3


def _terms(g: KernelGraph, addr: int) -> tuple[int, ...]:
    """The summands of an address (`X + row * stride + cols` -> X, row*stride, cols)."""
    return g.node(addr)[1:] if g.kind(addr) == "add" else (addr,)


def _bases(g: KernelGraph, ptr: int) -> set[int]:
    """The pointer parameters an address is built on (`X_ptr` in `X_ptr + row * stride + y`)."""
    terms = g.node(ptr)[1:] if g.kind(ptr) == "add" else (ptr,)
    out = {t for t in terms if g.kind(t) == "param"}
    for t in terms:   # a pointer chosen per program: `tl.where(is_q, q_ptr, k_ptr) + offs`
        node = g.node(t)
        if node[0] == "call" and node[1] == "where" and len(node) == 5:
            out |= {c for c in node[3:5] if g.kind(c) == "param"}
    return out


NORM_OPS = frozenset({"rms_norm", "layer_norm", "fused_add_rms_norm", "group_norm", "poly_norm",
                      "modulated_rms_norm"})


def _exp_weights_another_tensor(g: KernelGraph, m: "_Matcher") -> bool:
    """A live row sum of a product of an `exp` term and a loaded tensor that the exponent does
    not read (`sum(acc_i * exp2(m_i - m_max))`)."""
    for n in m.live:
        if not g.is_call(n, "sum") or len(g.node(n)) < 3:
            continue
        arg = g.node(n)[2]
        if g.kind(arg) != "mul":
            continue
        f = g.factors(arg)
        exps = [y for y in f if {"exp", "exp2"} & (g.call_names(y) | ({g.node(y)[1]} if g.kind(y) == "call" else set()))]
        if not exps:
            continue
        exp_loads = set().union(*(g.value_loads(y) for y in exps))
        others = [y for y in f if y not in exps]
        if any(g.value_loads(y) and not (g.value_loads(y) & exp_loads) for y in others):
            return True
    return False


def _exp_of_a_loaded_scale(g: KernelGraph, m: "_Matcher") -> bool:
    """An exponent reads a scalar loaded from memory (its address has no `arange`) besides the
    row: `exp(x / t - max)` with `t = tl.load(temp + row)`."""
    for e in m.calls("exp"):
        loads = g.value_loads(e)
        vectors = [ld for ld in loads if "arange" in g.call_names(g.node(ld)[1])]
        scalars = [ld for ld in loads if "arange" not in g.call_names(g.node(ld)[1])]
        if vectors and scalars:
            return True
    return False


def _weight_per_program_group(g: KernelGraph, m: "_Matcher") -> bool:
    """The program id taken modulo a count (`group = pid % NUM_GROUPS`) places both the
    normalised input (`x + row * stride + group * GROUP_DIM + cols`: the statistic covers one
    segment of the row) and a vector weight (`w + group * GROUP_DIM + cols`): a grouped norm with a
    weight per group. (A weight chosen per group of whole rows, `w + (rows % G) * D + cols` with
    each row normalised over all of it, is Liger's norm when G = 1 and is not matched.)"""
    def by_group(ld: int) -> bool:
        addr = g.node(ld)[1]
        if "arange" not in g.call_names(addr) or "program_id" not in g.call_names(addr):
            return False
        return any(g.kind(n) == "other" and g.node(n)[1] == "Mod" and "program_id" in g.call_names(n)
                   and "arange" not in g.call_names(n) for n in g.walk([addr], into_pointers=False))

    stats: set[int] = set()
    for r in m.calls("rsqrt"):
        stats |= g.value_loads(m.arg(r))
    if not stats or not any(by_group(ld) for ld in stats):
        return False
    return any(by_group(ld) for ld in m.of_kind("load") if ld not in stats)


def _weight_per_row_group(g: KernelGraph, m: "_Matcher") -> bool:
    """A load other than the normalised input whose address takes the row (a program id, with or
    without an arange of rows) modulo a count: `w + (rows % G) * D + cols`, a weight per group of
    rows (or per head)."""
    stats: set[int] = set()
    for r in m.calls("rsqrt", "sqrt"):
        stats |= g.value_loads(m.arg(r))
    if not stats:
        return False
    for ld in m.of_kind("load"):
        if ld in stats:
            continue
        addr = g.node(ld)[1]
        if any(g.kind(n) == "other" and g.node(n)[1] == "Mod" and "program_id" in g.call_names(n)
               for n in g.walk([addr], into_pointers=False)):
            return True
    return False


def _stores_lse_beside_loss(g: KernelGraph, m: "_Matcher") -> bool:
    """A partial log-sum-exp per vocabulary block: the kernel stores the row's LSE itself
    (`log(sum(exp(x - max))) + max`) at an address that takes a second grid axis
    (`lse + tl.program_id(1) * N + row`), for another kernel to combine: the vocabulary is split
    across programs (or ranks), a form Liger's cross-entropy (one program per row, the loss and the
    gradient stored) does not take. An LSE stored once per row for the kernel's own backward is
    still Liger's op."""
    lse = set(m._lse_nodes())
    if not lse:
        return False
    return any(not st.atomic and _is_lse(g, lse, st.value) and _on_second_grid_axis(g, st.ptr) for st in g.stores)


def _is_lse(g: KernelGraph, lse: set[int], n: int, depth: int = 0) -> bool:
    """`n` is one of the LSE nodes, the LSE through a loop's phi, or an LSE plus something."""
    if n in lse:
        return True
    if depth > 3:
        return False
    kind = g.kind(n)
    if kind == "phi":
        return any(_is_lse(g, lse, c, depth + 1) for c in g.children(n))
    if kind == "add":
        return any(c in lse for c in g.children(n))
    return False


def _on_second_grid_axis(g: KernelGraph, ptr: int) -> bool:
    """The address takes `tl.program_id(1)` or `(2)`."""
    for n in g.walk([ptr], into_pointers=False):
        if g.is_call(n, "program_id"):
            args = g.children(n)
            if args and g.kind(args[0]) == "const" and g.node(args[0])[1] in (1, 2):
                return True
    return False


def _glu_with_another_tensor(g: KernelGraph) -> bool:
    """The stored values read three or more loads: gate, up, and something else (a routing
    weight, a delta added after the activation). Liger's GLU reads gate and up only."""
    loads: set[int] = set()
    for st in g.stores:
        if not st.atomic:
            loads |= g.value_loads(st.value)
    return len(loads) >= 3


def _stored_repeatedly(g: KernelGraph) -> bool:
    """A store whose address moves with a loop variable that its value does not read: the same
    values written once per iteration (`for r in tl.static_range(REPEATS): tl.store(out + r * D, y)`)."""
    for st in g.stores:
        if st.atomic:
            continue
        in_addr = {n for n in g.walk([st.ptr], into_pointers=False) if g.kind(n) == "var"}
        if in_addr and g.value_loads(st.value) and not in_addr & g.walk([st.value]):
            return True   # (a constant written in a loop, zeroing a gradient, is not a copy)
    return False


def _norms_several_tensors(g: KernelGraph, m: "_Matcher") -> bool:
    """Two or more reciprocal roots of row statistics over different values (q and k in one
    kernel, a norm of the sum that another norm's output fed: a sandwich norm)."""
    inputs: list[frozenset[int]] = []
    for r in sorted(m.live):
        if g.is_call(r, "rsqrt", "sqrt") and "sum" in g.call_names(r):
            loads = g.value_loads(r)
            if any(_pointer_chosen_per_program(g, ld) for ld in loads):
                return True    # `row_in = q_ptr + ... if pid_task == 0 else kv_ptr + ...`
            if loads and loads not in inputs:
                inputs.append(loads)
    return len(inputs) >= 2


def _pointer_chosen_per_program(g: KernelGraph, load: int) -> bool:
    """The load's address starts from one of several tensors, chosen by a branch (a phi whose
    alternatives are built on different pointer parameters)."""
    addr = g.node(load)[1]
    terms = g.node(addr)[1:] if g.kind(addr) == "add" else (addr,)
    for t in (addr, *terms):
        node = g.node(t)
        if node[0] == "phi":
            bases = [frozenset(_bases(g, alt)) for alt in node[1:] if isinstance(alt, int)]
            if len({b for b in bases if b}) >= 2:
                return True
    return False


def _norm_output_reduced(g: KernelGraph, m: "_Matcher") -> bool:
    """A live row reduction whose input is built from the norm's reciprocal root (the normalised
    values), multiplied with a value loaded from a tensor the norm statistics never read: the
    norm's output goes into a further dot product with three or more other tensors. A norm backward (`sum(dy * w * x_hat)`) reads
    only the norm's own inputs and the gradient and is not this."""
    roots = [n for n in m.live if g.is_call(n, "rsqrt", "sqrt")]
    if not roots:
        return False
    stat_loads: set[int] = set()
    for r in roots:
        stat_loads |= g.value_loads(r)
    stat_bases: set[int] = set()
    for ld in stat_loads:
        stat_bases |= _bases(g, g.node(ld)[1])
    for n in m.live:
        if not g.is_call(n, "sum"):
            continue
        arg = g.node(n)[2] if len(g.node(n)) > 2 else None
        if arg is None or not isinstance(arg, int) or not ({"rsqrt", "sqrt"} & g.call_names(arg)):
            continue
        other = [ld for ld in g.value_loads(arg) if ld not in stat_loads]
        bases: set[int] = set()
        for ld in other:
            bases |= _bases(g, g.node(ld)[1])
        # a loaded tensor that is not a per-channel weight (1-D over the normalised axis) nor the
        # gradient of the norm's output: a recurrent state, keys, another operand
        if len(bases - stat_bases) >= 3:
            return True
    return False


def _gathers_by_loaded_index(g: KernelGraph) -> bool:
    """A load whose address holds a value loaded by the kernel (`scale[ids]`): a gather."""
    return any(g.kind(n) == "load" and g.value_loads(g.node(n)[1]) for n in range(len(g.nodes)))


def _indirect_store(g: KernelGraph) -> bool:
    """A store whose address holds a loaded index into a tensor the kernel does not read: a
    scatter such as a KV-cache write. (Writing a gradient back at the target index of the
    tensor that was read, as cross-entropy does, is not one.)"""
    read = set()
    for n in range(len(g.nodes)):
        if g.kind(n) == "load":
            read |= _bases(g, g.node(n)[1])
    return any(g.value_loads(s.ptr) and not _bases(g, s.ptr) <= read for s in g.stores if not s.atomic)


def recognise(g: KernelGraph) -> Recognition:
    m = _Matcher(g)
    if not g.stores:
        return Recognition(None)
    found: set[str] = set()
    found |= m.norms()
    found |= m.gated()
    ce = m.cross_entropy()
    if ce:
        if m.policy_ratio():
            return Recognition(None, (ce,), "policy-gradient loss (GRPO family), not a plain cross-entropy")
        found.add(ce)
    if m.softmax():
        found.add("softmax")
    if m.jsd():
        found.add("jsd")
    if m.kl_div():
        found.add("kl_div")
    if m.tvd():
        found.add("tvd")
    rope = m.rope()
    if rope:
        found.add(rope)
    if m.dyt():
        found.add("dyt")
    if m.relu_squared():
        found.add("relu_squared")
    if m.sparsemax():
        found.add("sparsemax")
    if not found:
        return Recognition(None)
    kept = set(found)
    for big, small in SUBSUMES.items():
        if big in kept:
            kept -= small
    ordered = tuple(sorted(found))
    if g.has_dot and kept != {"fused_linear_cross_entropy"}:
        return Recognition(None, ordered, "matmul or attention kernel (tl.dot)")
    if g.quantises:
        return Recognition(None, ordered, "fused with quantisation")
    if any(g.is_call(n, *RANDOM) for n in m.live):
        return Recognition(None, ordered, "fused with random sampling or dropout")
    if _indirect_store(g):
        return Recognition(None, ordered, "fused with a scattered store (e.g. a KV-cache write)")
    if len(kept) > 1:
        return Recognition(None, ordered, "fused kernel: " + " + ".join(sorted(kept)))
    op = next(iter(kept))
    if op in ("rope", "qwen2vl_mrope") and any(g.value_loads(st.ptr) for st in g.stores if not st.atomic):
        # rows written at loaded offsets (varlen sequences from cu_seqlens, a token permutation):
        # Liger's RoPE takes dense (batch, heads, seq, dim) tensors
        return Recognition(None, ordered, "rotation of rows placed through loaded offsets (varlen)")
    if op in ("swiglu", "geglu", "rope") and m.calls("split", "interleave"):
        # pairs taken apart with tl.split (x[..., 0::2], x[..., 1::2]): interleaved [gate, up] or
        # interleaved rotation pairs, a layout Liger's ops (separate gate and up, halves) do not take
        return Recognition(None, ordered, "interleaved pairs split in the kernel (not Liger's layout)")
    if op in ("swiglu", "geglu") and _glu_with_another_tensor(g):
        # silu(gate) * up scaled by the routed top-k weight, plus a LoRA delta: fused work
        return Recognition(None, ordered, "gated activation fused with another tensor")
    if _stored_repeatedly(g):
        # the same values written at several places (a norm expanded to REPEATS copies)
        return Recognition(None, ordered, "output written several times (an expand fused in)")
    if op in NORM_OPS and _norms_several_tensors(g, m):
        # q and k (or several heads' tensors) normalised in one launch: Liger's norm takes one
        return Recognition(None, ordered, "several tensors normalised in one launch")
    if op in NORM_OPS - {"modulated_rms_norm"} and m.norm_scaled_by_row_tensor(group_weights=op == "group_norm"):
        # norm(x) * gate or norm(x) * (1 + scale[row]) + shift: a gated or modulated norm Liger
        # does not ship in that form (its modulated RMSNorm is reported as such)
        return Recognition(None, ordered, "norm fused with a per-row gate or modulation")
    if op in NORM_OPS - {"group_norm"} and _weight_per_program_group(g, m):
        # the affine weight is read at `w + (pid % G) * D + cols`: a different weight for each
        # group of the row (a grouped RMSNorm), where Liger's norm applies one weight to every row
        return Recognition(None, ordered, "norm with a weight chosen per group of the row")
    if op in NORM_OPS - {"group_norm"} and _weight_per_row_group(g, m):
        # round 6 (r6-0005/0006): the weight is read at `w + (rows % G) * D + cols`, one weight per
        # group of rows, where Liger's norm applies one [D] weight to every row
        return Recognition(None, ordered, "norm with a weight chosen per group of rows")
    if op == "cross_entropy" and _stores_lse_beside_loss(g, m):
        # round 6 (r6-0003/0004): a partial log-sum-exp per vocabulary block, combined by another
        # kernel (the vocabulary split across programs or ranks)
        return Recognition(None, ordered, "cross-entropy over a vocabulary split across programs (partial LSEs)")
    if op == "qwen2vl_mrope" and _gathers_by_loaded_index(g):
        # round 6 (r6-0010): cos/sin gathered from a cache at loaded positions; Liger's mrope takes
        # them already assembled per section ([3, B, T, D])
        return Recognition(None, ordered, "mrope fused with the cos/sin gather at loaded positions")
    if op in NORM_OPS and _norm_output_reduced(g, m):
        # the normalised values are reduced again (q/k norm inside a recurrence or an attention
        # score, a norm fused into a dot product): Liger's norm would be the first half of it
        return Recognition(None, ordered, "norm fused into a further reduction of its output")
    if op in ELEMENTWISE_OPS and m.calls("sum", "max", "min"):
        # Liger's GLUs and RoPE are elementwise; a row reduction beside one is a norm backward,
        # a scan, or the amax of a quantisation step
        return Recognition(None, ordered, "elementwise op fused with a row reduction")
    if op == "softmax" and _exp_weights_another_tensor(g, m):
        # sum(exp(m_i - max) * acc_i): an attention output or a split-KV merge of partial
        # results, weighted by softmax terms; no softmax tensor is produced
        return Recognition(None, ordered, "softmax weights applied to another tensor (attention or a split-KV merge)")
    if op == "softmax" and m.calls("argmax", "argmin", "sort", "topk", "histogram"):
        # MoE routing: a softmax over expert logits that also picks the top-k (argmax, sort);
        # Liger's softmax returns the probabilities only
        return Recognition(None, ordered, "softmax inside a top-k selection (routing)")
    if op not in GATHERING_OPS and _gathers_by_loaded_index(g):
        # rows or tables read through loaded indices: per-expert scales at the routed ids, token
        # rows of an embedding. Liger's ops take dense tensors; the gather is work they do not do
        # (cross-entropy's own gather of the target logit is part of the op, and RoPE's cos/sin at
        # loaded positions is what Liger's `position_ids` does)
        return Recognition(None, ordered, "fused with a gather through loaded indices")
    if op == "softmax" and _exp_of_a_loaded_scale(g, m):
        # softmax(x / t[row]): a temperature (or scale) read per row from memory, a sampling
        # step Liger's softmax (which takes the logits as they are) does not do
        return Recognition(None, ordered, "softmax of the input scaled by a value loaded per row (a temperature)")
    if op == "softmax" and m.calls("cumsum"):
        return Recognition(None, ordered, "softmax feeding inverse-CDF sampling (cumsum of the probabilities)")
    if op == "rope" and m.complex_rope_qk() and not _gathers_by_loaded_index(g):
        # interleaved complex pairs of q and k times freqs_cis's (cos, sin) pairs: Llama-4's RoPE,
        # which Liger ships as `llama4_rope` (no position ids: a gather of the frequencies is not it)
        return Recognition("llama4_rope", tuple(sorted({*ordered, "llama4_rope"})))
    return Recognition(op, ordered, differs=_differences_from_liger(op, m))


def grpo_token_loss(g: KernelGraph) -> bool:
    """A GRPO per-token policy loss computed from logits (fla's `grpo_fwd_kernel`): the policy's
    log-probability at the completion token, `logp = x[token] - lse` (a logsumexp over the row and
    the logit gathered through the loaded token id), the k3 KL estimator against a loaded reference
    log-probability, `exp(ref - logp) - (ref - logp)` (`- 1`), and a loaded per-row advantage, both
    in the stored loss. Liger's `triton_grpo_loss` computes that per token (`reduce=False`; with
    `old_logp=None` its ratio is 1, the on-policy form). `recognise` calls such a kernel a
    policy-gradient loss, not a cross-entropy; the rule reports it with Liger's GRPO call. No dot,
    quantisation, random numbers or scattered store."""
    if not g.stores or g.has_dot or g.quantises or _indirect_store(g):
        return False
    m = _Matcher(g)
    if any(g.is_call(n, *RANDOM) for n in m.live):
        return False
    lses = set(m._lse_nodes())
    gathers = m._gathers()
    if not lses or not gathers:
        return False
    values = m._value_reach()

    def row_scalar(n: int) -> bool:
        node = g.node(n)
        return node[0] == "load" and not m.contains_call(node[1], "arange") and not m.loads(node[1])

    for e in m.calls("exp"):
        d = m.arg(e)
        node = g.node(d)
        if node[0] != "sub" or not row_scalar(node[1]):
            continue
        ref, logp = node[1], node[2]
        inside = g.walk([logp], into_pointers=False)
        if not (lses & inside and gathers & inside):
            continue
        k3 = g.find(("sub", e, d))          # exp(d) - d, the k3 estimator (its `- 1` is a constant)
        if k3 is None or k3 not in values:
            continue
        ref_base = _bases(g, g.node(ref)[1])
        for n in values:
            if row_scalar(n) and n != ref and not _bases(g, g.node(n)[1]) & ref_base and n not in gathers \
                    and not lses & g.walk([n], into_pointers=False):
                return True   # a second per-row scalar in the loss: the advantage
    return False


def loss_from_a_loaded_lse(g: KernelGraph) -> bool:
    """The loss half of a cross-entropy split over two kernels (issue 26's miss: fla's Ascend fused
    linear cross-entropy): the kernel loads one value per row (`lse + row`, no vocabulary index),
    gathers the logit at the target (a load through the loaded label), stores `lse - x[target]`,
    and uses the same loaded value as the row's normaliser, `exp(x - lse)` over the logits (the
    softmax gradient). It computes no log-sum-exp itself (`recognise` reads that as cross-entropy)
    and no dot. Whether another kernel of the file stores that log-sum-exp is the caller's question
    (`tri003_liger_reimplementation._split_cross_entropy`)."""
    if not g.stores or g.has_dot:
        return False
    m = _Matcher(g)
    exps = m.calls("exp")
    if not exps or m._lse_nodes():
        return False
    gathers = m._gathers()
    if not gathers:
        return False
    values = m._value_reach()

    def row_scalar(n: int) -> bool:   # a load of one value per row: no arange, no loaded index in its address
        node = g.node(n)
        return node[0] == "load" and not m.contains_call(node[1], "arange") and not m.loads(node[1])

    for s in m.of_kind("sub"):
        _, left, right = g.node(s)
        if s not in values or not row_scalar(left):
            continue
        lse_base = _bases(g, g.node(left)[1])
        picked = {n for n in gathers & g.walk([right], into_pointers=False)
                  if g.kind(n) == "load" and not _bases(g, g.node(n)[1]) & lse_base}
        if not picked:
            continue
        logits = set().union(*(_bases(g, g.node(n)[1]) for n in picked))
        for e in exps:
            arg = g.node(m.arg(e))
            if arg[0] == "sub" and arg[2] == left and any(
                    _bases(g, g.node(ld)[1]) & logits for ld in m.loads(arg[1])):
                return True
    return False


def stores_row_lse(g: KernelGraph) -> bool:
    """The kernel stores a log-sum-exp of a full row and nothing else recognisable: `m + log(sum(
    exp(x - m)))`, one value per row (its address holds no arange), no target gathered, no dot.
    The partner of `loss_from_a_loaded_lse`. A partial log-sum-exp per vocabulary block (a second
    grid axis in the address) does not count: combining blocks is work Liger's op does inside."""
    if not g.stores or g.has_dot:
        return False
    m = _Matcher(g)
    lses = set(m._lse_nodes())
    if not lses or m._gathers():
        return False
    for st in g.stores:
        if st.atomic or m.contains_call(st.ptr, "arange") or _on_second_grid_axis(g, st.ptr):
            continue
        if lses & g.walk([st.value], into_pointers=False):
            return True
    return False


def _differences_from_liger(op: str, m: _Matcher) -> str:
    """How the kernel's function differs from the Liger op's, in the words the message uses
    ("" when Liger's op is a drop-in)."""
    if op == "geglu" and m.__dict__.get("geglu_exact"):
        return ("this kernel uses the exact erf GELU, Liger's GeGLU the tanh approximation "
                "(the two GELUs differ by up to 5e-4 in float64): not a drop-in")
    if op == "rms_norm" and m.__dict__.get("rms_gemma"):
        return ("this kernel scales by (1 + w), Gemma's form: a drop-in only as "
                "`liger_kernel.transformers.functional.liger_rms_norm(X, W, eps, offset=1.0, casting_mode='gemma')` or "
                "`liger_kernel.transformers.rms_norm.LigerRMSNormForGemma(hidden_size, eps=1e-6)` (weight initialised to zeros)")
    if op == "fused_add_rms_norm" and m.__dict__.get("rms_gemma"):
        # round 6 (r6-0016, r6-0022): the plain call drops Gemma's +1 (offset defaults to 0.0)
        return ("this kernel scales by (1 + w), Gemma's form: a drop-in only as "
                "`liger_kernel.transformers.functional.liger_fused_add_rms_norm(X, R, W, eps, offset=1.0, "
                "casting_mode='gemma')` (the default offset=0.0 drops the +1)")
    if op in ("rope",) and (m.__dict__.get("rope_interleaved") or m.interleaved_loads()):
        return ("this kernel rotates interleaved pairs (x[2i], x[2i+1], GPT-J style) where Liger's RoPE rotates "
                "halves (x[i], x[i + d/2], Hugging Face style with duplicated cos/sin): not a drop-in without "
                "permuting q, k and the cos/sin layout")
    if op == "kl_div" and m._lse_nodes():
        return ("this kernel takes logits and computes their log-softmax itself, where Liger's KL takes "
                "log-probabilities as `input` (and probabilities as `target`, or log-probabilities with "
                "`log_target=True`): not a drop-in (only after `torch.log_softmax` on the inputs)")
    return ""
