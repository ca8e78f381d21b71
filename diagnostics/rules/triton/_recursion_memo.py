"""A memo for the shape recursions of `_static_sizes` and `_shapes` that returns exactly what the
recursion without it returns.

The shape recursion follows an expression's operands and, through a local name, the values bound
to it. Two things of the path stop it with "unknown" (None): a local name met again (a cycle: the
names being expanded are `seen`), and a depth past a limit. Without a memo, a local that several
others read is expanded once per path to it, which grows exponentially with the chain of locals
in a long kernel (one 813-line kernel took 4 s).

Why a result can be reused without looking at `seen`: the recursion is strict (a None operand
makes its user None) and follows the same operands whatever they turn out to be, so an
expression's result is None whenever its expansion can reach a cycle or a depth past the limit,
and its one context-free value otherwise. A name of `seen` reachable from an expression means
the expression is on a cycle (everything in `seen` is an ancestor on the path), so `seen` never
changes the result: only the depth does. Each entry therefore keeps its result with how deep its
expansion went (its height) and whether it was cut by the depth limit, and a later call reuses it
when its depth gives the same outcome: an uncut entry while depth + height stays within the
limit (past it, the expansion would be cut: None), a cut one at the same depth or deeper.

Callers must start each top-level expansion with an empty `seen`. The leading underscore keeps
the registry from loading this module as a rule.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Frame:
    __slots__ = ("deepest", "cut")

    def __init__(self, depth: int):
        self.deepest = depth   # the deepest depth tested against the limit
        self.cut = False       # whether a test found a depth past the limit


class RecursionMemo(Generic[T]):
    """`get(key, depth, compute)` is `compute()` (the expansion of `key` at `depth`), reusing an
    earlier result when the depth gives it the same outcome. Inside `compute`, test the depth
    with `too_deep`."""

    def __init__(self, limit: int):
        self.limit = limit
        self._entries: dict[Hashable, tuple[T | None, int, int | None]] = {}  # result, height, cut at depth
        self._frames: list[_Frame] = []
        self.computed = 0  # expansions run (not reused): a measure for tests

    def get(self, key: Hashable, depth: int, compute: Callable[[], T | None]) -> T | None:
        entry = self._entries.get(key)
        if entry is not None:
            result, height, cut_at = entry
            if cut_at is None:
                if depth + height <= self.limit:
                    self._charge(depth + height, cut=False)
                    return result
                if result is None:
                    self._charge(self.limit + 1, cut=True)
                    return None
                # deeper than it was: the expansion would now be cut somewhere (None); compute it
            elif depth == cut_at or depth > cut_at and result is None:
                self._charge(depth + height, cut=True)
                return result
        frame = _Frame(depth)
        self._frames.append(frame)
        try:
            result = compute()
        finally:
            self._frames.pop()
        self.computed += 1
        self._entries[key] = (result, frame.deepest - depth, depth if frame.cut else None)
        self._charge(frame.deepest, frame.cut)
        return result

    def too_deep(self, depth: int) -> bool:
        """`depth > limit`, noted for the expansion being computed."""
        if self._frames:
            frame = self._frames[-1]
            if depth > frame.deepest:
                frame.deepest = depth
            if depth > self.limit:
                frame.cut = True
        return depth > self.limit

    def _charge(self, deepest: int, cut: bool) -> None:
        """The caller's expansion went (through this call) as deep as this one did."""
        if self._frames:
            frame = self._frames[-1]
            if deepest > frame.deepest:
                frame.deepest = deepest
            if cut:
                frame.cut = True
