"""What a CUDA rule's `check(ctx)` receives.

The contract for a CUDA rule module (`diagnostics/rules/cuda/cudNNN_<name>.py`):

    RULE = Rule(code="CUDNNN", name="kebab-name", summary="...", language="cuda", fixable=...)

    def check(ctx: CudaContext) -> Iterator[Finding]:
        for node in ctx.device_nodes("number_literal"):
            ...
            yield ctx.finding(node, "one line that names the fix", [Fix(..., (ctx.replace(node, "0.5f"),))])

* `ctx.tree` is the tree-sitter tree of one CUDA text, `ctx.source` its UTF-8 bytes and
  `ctx.text` the same as `str`. The text is either a whole `.cu`/`.cuh` file or the value of a
  Python string literal that embeds CUDA (`ctx.origin` says which: "file", "load_inline",
  "cupy.RawKernel", "cupy.RawModule").
* `ctx.compiler` is the compiler that will build the text: "nvcc" (`.cu` files,
  `torch.utils.cpp_extension.load_inline`) or "nvrtc" (cupy). Rules use it where the two differ.
* `ctx.types` (a `TypeInfo`) gives the precision kind of any expression and where its value
  goes; `ctx.device_nodes(type)` yields nodes of a type inside device code only.
* `ctx.finding(node, message, fixes)` and `ctx.replace(node, text)` / `ctx.insert_after(node,
  text)` take tree-sitter nodes and return positions in the HOST file: the `.cu` file, or the
  `.py` file at the exact line and code-point column where the string's characters were written.
  Rules never compute positions themselves.
* Rules never run the code and never import the host file.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Iterator

from tritonify.diagnostics.cuda import syntax
from tritonify.diagnostics.cuda.parser import parse
from tritonify.diagnostics.cuda.positions import FileMap, StringLiteralMap
from tritonify.diagnostics.cuda.types import TypeInfo
from tritonify.diagnostics.model import Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule

LONE_CR = re.compile(r"\r(?!\n)")


@dataclass
class CudaContext:
    text: str
    path: str = "<string>"
    positions: FileMap | StringLiteralMap | None = None
    compiler: str = "nvcc"
    origin: str = "file"
    rule: Rule | None = None          # set by the runner before each rule's check
    _byte_to_char: list[int] | None = field(default=None, repr=False)

    def __post_init__(self):
        if self.positions is None:
            self.positions = FileMap(self.text)

    @cached_property
    def source(self) -> bytes:
        # tree-sitter ends a line (a `//` comment, a `#include`) only at "\n": a lone "\r" (old
        # Mac line endings) is given to it as "\n", which keeps every offset where it was.
        text = LONE_CR.sub("\n", self.text) if "\r" in self.text else self.text
        return text.encode("utf-8", errors="surrogatepass")

    @cached_property
    def tree(self):
        return parse(self.source)

    @cached_property
    def types(self) -> TypeInfo:
        return TypeInfo(self.tree, self.compiler)

    # ---- traversal -------------------------------------------------------------------------
    def device_nodes(self, *node_types: str) -> Iterator:
        """Nodes of the given types that sit inside device code (__global__/__device__)."""
        wanted = set(node_types)
        for node in syntax.walk(self.tree.root_node):
            if node.type in wanted and syntax.is_device_code(node):
                yield node

    def text_of(self, node) -> str:
        return syntax.text_of(node)

    # ---- positions ---------------------------------------------------------------------------
    def _char_index(self, byte_offset: int) -> int:
        if self.text.isascii():
            return byte_offset
        if self._byte_to_char is None:
            table = []
            for i, ch in enumerate(self.text):
                table.extend([i] * len(ch.encode("utf-8", errors="surrogatepass")))
            table.append(len(self.text))
            self._byte_to_char = table
        return self._byte_to_char[min(byte_offset, len(self._byte_to_char) - 1)]

    def range(self, node) -> tuple[int, int, int, int]:
        """(line, column, end_line, end_column) of a node in the host file."""
        start = self._char_index(node.start_byte)
        end = self._char_index(node.end_byte)
        line, col = self.positions.start(start)
        end_line, end_col = self.positions.end(end)
        return line, col, end_line, end_col

    def replace(self, node, text: str) -> Edit:
        line, col, end_line, end_col = self.range(node)
        return Edit(line, col, end_line, end_col, text)

    def insert_after(self, node, text: str) -> Edit:
        _, _, end_line, end_col = self.range(node)
        return Edit.insert(end_line, end_col, text)

    def finding(
        self,
        node,
        message: str,
        fixes: Iterable[Fix] = (),
        *,
        severity: Severity | None = None,
        code: str | None = None,
    ) -> Finding:
        assert self.rule is not None, "the runner sets ctx.rule before calling check()"
        return self.rule.finding(self.path, self.range(node), message, fixes, severity=severity, code=code)

    # ---- suppression -------------------------------------------------------------------------
    @cached_property
    def noqa(self) -> dict[int, set[str] | None]:
        """Host line -> codes silenced by a `// noqa` or `// noqa: CUD001` comment (None: all)."""
        out: dict[int, set[str] | None] = {}
        if b"noqa" not in self.source:
            return out
        for node in syntax.walk(self.tree.root_node):
            if node.type != "comment":
                continue
            body = syntax.text_of(node).lstrip("/*").strip()
            if not body.lower().startswith("noqa"):
                continue
            rest = body[4:].strip()
            line = self.range(node)[0]
            if rest.startswith(":"):
                codes = {c.strip().rstrip("*/").strip().upper() for c in rest[1:].split(",")}
                out[line] = {c for c in codes if c}
            else:
                out[line] = None
        return out

    def is_suppressed(self, finding: Finding) -> bool:
        for line in {finding.line, finding.end_line}:
            if line in self.noqa:
                codes = self.noqa[line]
                if codes is None or finding.code.upper() in codes:
                    return True
        return False
