"""TRI007 unmasked-access: a `tl.load`/`tl.store` over `tl.arange` offsets with no mask, where the
kernel shows the offsets can run past a run-time bound.

Most unmasked vector accesses are deliberate: a constexpr tile that exactly covers a dimension
(`tl.arange(0, HEAD_DIM)`), a branch under `if EVEN_K:`, offsets wrapped with `% M`. So the rule
fires only on evidence that this access should have been masked:

1. the same offsets are masked at another access of the kernel;
2. the offsets are compared with a run-time size parameter (`mask = offs < n`), but not here;
3. the same base pointer is masked at another access, and these offsets move with the program id;
4. the offsets move with the program id and a size parameter (`n_elements`) is never used at all.

Evidence only counts when it is about the same lanes and a real bound: the offsets must hold the
same value (the bindings that reach both accesses, so `n_offsets` rebound for a later loop is other
lanes), the other mask must cut a tile at a run-time size (not `idx >= 0`, not `bins < E` with a
compile-time `E` over a padded scratch), and `==` bounds nothing. An access in a loop cut short on
purpose (`range(0, n_tiles - 1)`, `range(lo, (n // B) * B, B)`, `min(...)`), under an `if` that tests
the bound, or over a short literal field (`tl.arange(0, 4)`) is quiet.

Block pointers (`boundary_check=`) and tensor descriptors are not this rule's business.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.rules.triton._memory_flow import (
    SIZE_NAME,
    Access,
    kernel_flow,
    position,
)
from tritonify.diagnostics.triton_ast import Kernel, walk_nodes

RULE = Rule(
    code="TRI007",
    name="unmasked-access",
    summary="tl.load/tl.store over tl.arange offsets without a mask where a run-time bound exists",
    severity=Severity.WARNING,
    fixable=True,
    # Opt-in: round 1 of the real-world study found 0 of 5 sampled findings real; after the fixes
    # (full-block loops, rebound offsets, data masks, record fields) 5 findings remain on the whole
    # corpus, about 3 real: too few to show 90%, and a padded buffer is invisible to the linter.
    default=False,
)

_DIVISIBILITY_FLAG = re.compile(r"even|divisible|aligned|full|no_?mask|exact", re.IGNORECASE)
_CLAMPS = ("where", "minimum", "maximum", "clamp")
_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_FIELD = 16  # a literal `tl.arange(0, n)` this short is a record field, not a tile


@dataclass
class Evidence:
    message: str
    mask_text: str | None = None           # what to add as mask=
    safe: bool = False


class _Kernel:
    """The facts about one kernel that every access is judged against."""

    def __init__(self, ctx: PythonContext, kernel: Kernel):
        self.ctx = ctx
        self.kernel = kernel
        self.flow = kernel_flow(ctx, kernel)
        self.runtime_sizes = {p.name for p in self.flow.runtime_int_params()}
        self._arange_derived: dict[str, bool] = {}
        self._keys: dict[int, tuple[ast.AST, frozenset]] = {}

    def arange_derived(self, name: str) -> bool:
        if not self.flow.is_local(name):
            return False
        found = self._arange_derived.get(name)
        if found is None:
            found = self._arange_derived[name] = any(
                self.flow.tl_call(n, "arange") for b in self.flow.bindings[name] if b.value is not None
                for n in self.flow.expand(b.value))
        return found

    def offset_nodes(self, pointer: ast.expr) -> list[ast.AST]:
        """The nodes of an address that make up its offset: locals are followed, except those
        that hold a pointer (`row_ptr = x_ptr + row * stride` is the base, not the offset)."""
        out: list[ast.AST] = []
        seen: set[str] = set()
        stack: list[ast.AST] = [pointer]
        while stack and len(out) < 4000:
            node = stack.pop()
            for sub in walk_nodes(node):
                out.append(sub)
                if isinstance(sub, ast.Name) and sub.id not in seen and self.flow.is_local(sub.id):
                    seen.add(sub.id)
                    if not self.flow.is_pointer_local(sub.id):
                        stack.extend(b.value for b in self.flow.bindings[sub.id] if b.value is not None)
        return out

    def offset_names(self, pointer: ast.expr) -> frozenset[str]:
        """The arange-derived locals that make up an address's offset."""
        return frozenset(
            n.id for n in self.offset_nodes(pointer)
            if isinstance(n, ast.Name) and not self.flow.is_pointer_local(n.id) and self.arange_derived(n.id)
        )

    def base_pointers(self, pointer: ast.expr) -> set[str]:
        return self.flow.pointer_roots(pointer)

    def moves_with_program(self, pointer: ast.expr) -> bool:
        """The offset is tiled by the program id times a block (`pid * BLOCK + tl.arange(...)`):
        the last program's block is the one that can run past the end."""
        for node in self.offset_nodes(pointer):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                for a, b in ((node.left, node.right), (node.right, node.left)):
                    block = (isinstance(b, ast.Name) and self.flow.is_constexpr(b.id)) or (
                        isinstance(b, ast.Constant) and isinstance(b.value, int))
                    if block and self.flow.mentions_tl(a, "program_id"):
                        return True
        return False

    def small_field(self, pointer: ast.expr) -> bool:
        """Every `tl.arange` of the offset is a short literal run (`tl.arange(0, 4)`): a fixed-size
        field of a record (4 scale bytes per slot), exact by construction, not a tile of a dimension."""
        ranges = [n for n in self.offset_nodes(pointer) if self.flow.tl_call(n, "arange")]
        if not ranges:
            return False
        for call in ranges:
            bound = call.args[-1] if call.args else None  # type: ignore[attr-defined]
            if not (isinstance(bound, ast.Constant) and isinstance(bound.value, int) and bound.value <= _FIELD):
                return False
        return True

    def key(self, pointer: ast.AST, seen: frozenset[str] = frozenset()) -> frozenset[tuple[str, frozenset[int]]]:
        """The locals an address is written in (`row`, `cols` for `out_ptr + row * s + cols`), each
        with the bindings that reach it there, looking through locals that hold an address
        (`a_ptrs`, `y_ptr += row * stride`) but not through the offsets themselves: two accesses
        with the same key address the same lanes. `n_offsets` rebound for a later loop is another
        set of lanes than the masked `n_offsets` before it."""
        if not seen:  # an access's key is asked once per other access: compute it once
            hit = self._keys.get(id(pointer))
            if hit is None or hit[0] is not pointer:
                hit = self._keys[id(pointer)] = (pointer, self._key(pointer, seen))
            return hit[1]
        return self._key(pointer, seen)

    def _key(self, pointer: ast.AST, seen: frozenset[str]) -> frozenset[tuple[str, frozenset[int]]]:
        out: set[tuple[str, frozenset[int]]] = set()
        for node in walk_nodes(pointer):
            if not isinstance(node, ast.Name) or node.id in seen or not self.flow.is_local(node.id):
                continue
            if node.id in self.flow.pointer_params or self.flow.is_pointer_local(node.id):
                for b in self.flow.bindings[node.id]:
                    if b.value is not None and not b.loop_target:
                        out |= self._key(b.value, seen | {node.id})
            else:
                reach = self.flow.reach(node)
                sites = frozenset(id(b.stmt) for b in reach.bindings) if reach is not None else frozenset()
                out.add((node.id, sites))
        return frozenset(out)

    @staticmethod
    def key_names(key: frozenset[tuple[str, frozenset[int]]]) -> frozenset[str]:
        return frozenset(name for name, _ in key)

    def varying(self, names: frozenset[str]) -> frozenset[str]:
        """The names among `names` that differ between lanes or loop iterations."""
        loops = {n for n in names if any(b.loop_target for b in self.flow.bindings.get(n, []))}
        return frozenset(n for n in names if self.arange_derived(n)) | loops

    def loop_names(self, names: frozenset[str]) -> frozenset[str]:
        return frozenset(n for n in names if any(b.loop_target for b in self.flow.bindings.get(n, [])))

    def clamped(self, pointer: ast.expr) -> bool:
        """Offsets wrapped (`% M`) or clamped (`tl.minimum`, `tl.where`) stay in bounds by construction."""
        for node in self.flow.expand(pointer):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and self.flow.mentions_tl(node.left, "arange"):
                return True
            if self.flow.tl_call(node, *_CLAMPS) and self.flow.mentions_tl(node, "arange"):
                return True
        return False

    def under_flag(self, call: ast.Call) -> bool:
        """Inside `if EVEN_K:` (a constexpr or divisibility flag): the author split the masked case off."""
        for anc in self.ctx.ancestors(call):
            if anc is self.kernel.node:
                return False
            if isinstance(anc, (ast.If, ast.IfExp)):
                names = self.flow.names_in(anc.test)
                if any(self.flow.is_constexpr(n) or _DIVISIBILITY_FLAG.search(n) for n in names):
                    return True
        return False

    def in_full_block_loop(self, call: ast.Call) -> bool:
        """Inside a `for` whose stop was cut short on purpose (`range(0, n_tiles - 1)`,
        `range(lo, hi - masked_cols, BLOCK)`, `range(0, min(BC, T - t0))`, `range(0, N // BLOCK)`):
        the loop covers full blocks only, and the partial tail is handled elsewhere."""
        for anc in self.ctx.ancestors(call):
            if anc is self.kernel.node:
                return False
            if isinstance(anc, ast.For) and isinstance(anc.iter, ast.Call) and anc.iter.args:
                args = anc.iter.args
                stop = args[1] if len(args) >= 2 else args[0]
                if self._cut_short(stop):
                    return True
        return False

    def _cut_short(self, stop: ast.AST, depth: int = 0) -> bool:
        if depth > 4:
            return False
        if isinstance(stop, ast.BinOp) and isinstance(stop.op, ast.Sub):
            return True
        for node in walk_nodes(stop):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv) and not _rounds_up(node.left):
                return True  # `(kv_len // BLOCK) * BLOCK`: whole blocks
            if isinstance(node, ast.Call):
                func = node.func
                if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) in ("min", "minimum"):
                    return True
        if isinstance(stop, ast.Name) and self.flow.is_local(stop.id):
            value = self.flow.value_at(stop)
            return value is not None and self._cut_short(value, depth + 1)
        if isinstance(stop, ast.BinOp):
            return any(isinstance(side, ast.Name) and self.flow.is_local(side.id) and self._cut_short(side, depth + 1)
                       for side in (stop.left, stop.right))
        return False

    def bounds_only(self, mask: ast.AST, depth: int = 0) -> bool:
        """A mask made only of bounds checks (`cols < n_cols`, `(rows < M) & (cols < N)`), not of
        data (`mask & keep`): copying it to another access changes nothing but the bounds."""
        if depth > 8:
            return False
        if isinstance(mask, ast.Name):
            value = self.flow.value_at(mask)
            return value is not None and self.bounds_only(value, depth + 1)
        if isinstance(mask, ast.BinOp) and isinstance(mask.op, ast.BitAnd):
            return self.bounds_only(mask.left, depth + 1) and self.bounds_only(mask.right, depth + 1)
        if isinstance(mask, ast.Compare):
            for node in walk_nodes(mask):
                if not isinstance(node, ast.Name):
                    continue
                name = node.id
                if not self.flow.is_local(name) or self.loop_names(frozenset({name})):
                    continue
                value = self.flow.value_at(node)
                if value is None and self.arange_derived(name):
                    continue  # an offset built in several steps (`offs += BLOCK`)
                if value is None or self.flow.mentions_tl(value, "load"):
                    return False  # data read from memory (`tgt < ignore_index`), not a bound
            return not any(self.flow.tl_call(n, "load") for n in walk_nodes(mask))
        return False

    def tail_mask(self, mask: ast.AST) -> bool:
        """A mask that cuts a tile at a run-time size (`offs < n_cols`, `(rm < M)[:, None] & ...`):
        only such a mask is evidence that another access over the same lanes needs one. A data mask
        (`idx >= 0`), a mask against a compile-time size (`bins < E` over a padded scratch) or one
        that selects a loop step (`j < n_splits`) bounds nothing here."""
        if not self.bounds_only(mask):
            return False
        for node in self.flow.expand(mask):
            if isinstance(node, ast.Compare) and all(isinstance(op, _ORDER) for op in node.ops):
                names = {n.id for n in walk_nodes(node) if isinstance(n, ast.Name)}
                sizes = {n for n in names if n in self.runtime_sizes or self._runtime_local(n)}
                lanes = {n for n in names - sizes if self.arange_derived(n)} or self.flow.mentions_tl(node, "arange")
                if sizes and lanes:
                    return True
        return False

    def _runtime_local(self, name: str) -> bool:
        """A local computed from run-time size parameters only (`n = N - start`), not from lanes."""
        if not self.flow.is_local(name) or self.arange_derived(name):
            return False
        read = self.flow.names_in(ast.Name(id=name))
        return bool(read & self.runtime_sizes)

    def guards(self, compare: ast.Compare, call: ast.Call) -> bool:
        """`compare` is (part of) the test of an `if`/`while` around `call`."""
        for anc in self.ctx.ancestors(call):
            if anc is self.kernel.node:
                return False
            if isinstance(anc, (ast.If, ast.While)) and any(n is compare for n in walk_nodes(anc.test)):
                return True
        return False

    def available_before(self, expr: ast.expr, call: ast.Call) -> bool:
        """Every name in `expr` is a parameter, a global, or a local bound before `call`."""
        here = position(call)
        for node in walk_nodes(expr):
            if isinstance(node, ast.Name) and self.flow.is_local(node.id) \
                    and not any(position(b.stmt) < here for b in self.flow.bindings[node.id]):
                return False
        return True

    def size_comparisons(self, varying: frozenset[str], loops: frozenset[str],
                         key: frozenset[tuple[str, frozenset[int]]] = frozenset()) -> list[tuple[ast.Compare, str]]:
        """`offs < n` anywhere in the kernel, comparing some of this address's varying names (and
        every loop variable in it: `i + cols` in a loop over full blocks is not bounded by
        `cols < n`) with a run-time size parameter. A varying name must hold the same value in
        the comparison as in the address (the same bindings reach both)."""
        sites = dict(key)
        out = []
        for node, reads, names, sizes in self._size_compares:
            if not (names & varying and loops <= names):
                continue
            if any(n.id in varying and self._same_value(n, sites.get(n.id)) for n in reads):
                out.append((node, min(sizes)))
        return out

    @cached_property
    def _size_compares(self) -> list[tuple[ast.Compare, list[ast.Name], set[str], set[str]]]:
        """(comparison, its reads, the names it reads, the run-time sizes among them) for every
        ordering comparison of the kernel that reads a run-time size, listed once for all accesses."""
        out = []
        for node in self.kernel.walk():
            if not isinstance(node, ast.Compare) or not all(isinstance(op, _ORDER) for op in node.ops):
                continue  # `tgt == ignore_index` compares values: it bounds nothing
            reads = [n for n in walk_nodes(node) if isinstance(n, ast.Name)]
            names = {n.id for n in reads}
            sizes = names & self.runtime_sizes
            if sizes:
                out.append((node, reads, names, sizes))
        return out

    def _same_value(self, use: ast.Name, sites: frozenset[int] | None) -> bool:
        if sites is None:
            return True
        reach = self.flow.reach(use)
        return reach is None or frozenset(id(b.stmt) for b in reach.bindings) == sites

    @cached_property
    def _unused_sizes(self) -> list[str]:
        read = {n.id for n in self.kernel.walk() if isinstance(n, ast.Name)}
        return [p for p in sorted(self.runtime_sizes) if p not in read and SIZE_NAME.search(p)]

    def unused_sizes(self) -> list[str]:
        return list(self._unused_sizes)

    def mask_variable(self, compare: ast.Compare) -> str | None:
        parent = self.ctx.parents.get(compare)
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            return parent.targets[0].id
        return None


def _rounds_up(numerator: ast.AST) -> bool:
    """`n + BLOCK - 1` in `(n + BLOCK - 1) // BLOCK`: a ceiling division, which counts the partial block."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub) and isinstance(n.right, ast.Constant)
               and n.right.value == 1 for n in walk_nodes(numerator))


def _line(node: ast.AST) -> int:
    return getattr(node, "lineno", 0)


def _evidence(k: _Kernel, access: Access, masked: list[Access]) -> Evidence | None:
    ptr = access.pointer
    assert ptr is not None
    offsets = k.offset_names(ptr)
    text = k.ctx.segment(ptr)
    what = f"`tl.{access.op}({text}, ...)`" if len(text) <= 40 else f"this `tl.{access.op}`"

    key = k.key(ptr)
    names = k.key_names(key)
    varying = k.varying(names)
    for other in masked:
        if offsets and varying and k.key(other.pointer) == key and k.tail_mask(other.mask):  # type: ignore[arg-type]
            mask_text = k.ctx.segment(other.mask)  # type: ignore[arg-type]
            usable = k.available_before(other.mask, access.call)  # type: ignore[arg-type]
            pure = k.bounds_only(other.mask)  # type: ignore[arg-type]
            return Evidence(
                f"{what} has no mask, but the same offsets are masked at line {_line(other.call)} "
                f"(`mask={mask_text}`): the lanes past the bound {'read' if access.op == 'load' else 'write'} out of bounds; "
                f"add `mask={mask_text}`",
                mask_text if usable else None,
                safe=usable and pure,
            )

    for compare, size in k.size_comparisons(varying, k.loop_names(names), key):
        if k.guards(compare, access.call):
            continue  # `if j < n:` around the access: it is the guard
        variable = k.mask_variable(compare)
        mask_text = variable or k.ctx.segment(compare)
        usable = k.available_before(ast.Name(id=variable) if variable else compare, access.call)
        return Evidence(
            f"{what} has no mask, but its offsets are bounded by the run-time size `{size}` at line "
            f"{_line(compare)} (`{k.ctx.segment(compare)}`): the tail goes out of bounds; add `mask={mask_text}`",
            mask_text if usable else None,
        )

    tiled = k.moves_with_program(ptr) and not k.small_field(ptr)
    if tiled:
        bases = k.base_pointers(ptr)
        for other in masked:
            shared = bases & k.base_pointers(other.pointer)  # type: ignore[arg-type]
            if shared and k.tail_mask(other.mask):  # type: ignore[arg-type]
                return Evidence(
                    f"{what} has no mask, but `{min(shared)}` is masked at line {_line(other.call)}: the block "
                    "that runs past the end is unguarded here; mask it like the other access"
                )
        unused = k.unused_sizes()
        if unused and len(offsets) == 1:
            size = unused[0]
            (offs,) = offsets
            return Evidence(
                f"{what} has no mask and `{size}` is never used: the last program's block "
                f"{'reads' if access.op == 'load' else 'writes'} past the end unless every size is a multiple "
                f"of the block; add `mask={offs} < {size}`",
                f"{offs} < {size}",
            )
    return None


def _fix(k: _Kernel, access: Access, evidence: Evidence) -> Fix | None:
    call = access.call
    positional_limit = 1 if access.op == "load" else 2
    if evidence.mask_text is None or len(call.args) > positional_limit:
        return None
    last = call.keywords[-1].value if call.keywords else call.args[-1]
    _, _, end_line, end_col = k.ctx.source.node_range(last)
    return Fix(
        title=f"Add mask={evidence.mask_text}",
        edits=(Edit.insert(end_line, end_col, f", mask={evidence.mask_text}"),),
        applicability=Applicability.SAFE if evidence.safe else Applicability.UNSAFE,
    )


def check(ctx: PythonContext) -> Iterator[Finding]:
    for kernel in ctx.kernels:
        k = _Kernel(ctx, kernel)
        accesses = [a for a in k.flow.accesses if a.pointer is not None and not k.flow.is_block_pointer(a.pointer)]
        masked = [a for a in accesses if a.mask is not None]
        for access in accesses:
            if access.mask is not None or access.boundary_check is not None:
                continue
            if not k.flow.mentions_tl(access.pointer, "arange"):  # type: ignore[arg-type]
                continue  # a scalar access
            if k.clamped(access.pointer) or k.under_flag(access.call) or k.in_full_block_loop(access.call):  # type: ignore[arg-type]
                continue
            evidence = _evidence(k, access, [m for m in masked if m is not access])
            if evidence is None:
                continue
            fix = _fix(k, access, evidence)
            yield ctx.finding(access.call, evidence.message, [fix] if fix else [])
