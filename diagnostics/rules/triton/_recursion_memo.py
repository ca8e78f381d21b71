"""A memo for the shape recursion of `_static_sizes` (and `_shapes`): each expression's shape,
per scenario, computed once, reused where the depth gives the same outcome.

The shape recursion follows an expression's operands and, through a local name, the bindings
that reach it. Without a memo, a local that several others read is expanded once per path to
it, which grows exponentially with the chain of locals in a long kernel (one 813-line kernel
took 4 s). A depth past a limit stops the recursion with "unknown" (None), and a recursion that
is strict (a None operand makes its user None) gives an expression None whenever its expansion
goes past the limit, its one value otherwise. So each entry keeps its result with how deep its
expansion went (its height) and whether the limit cut it, and a later call reuses it when its
depth gives the same outcome: an uncut entry while depth + height stays within the limit, a cut
one at the same depth (or deeper, when it is None). Where that holds the memo returns exactly
what the recursion without it returns (tests/rules/test_shape_memo.py). The other thing of the
path, the bindings being followed (`seen`, skipped where a loop carries a value around), is not
part of the key: a loop-carried value keeps one shape, so the first expansion's answer is kept.

The leading underscore keeps the registry from loading this module as a rule.
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
