"""The tree-sitter CUDA parser, built once per process.

tree-sitter is error tolerant: a file with a syntax error still yields a tree (with ERROR
nodes), so the rules keep working on code that is being typed in the editor."""
from __future__ import annotations

from functools import lru_cache


class CudaParserUnavailable(RuntimeError):
    """tree-sitter or tree-sitter-cuda is not installed (both are core dependencies)."""


@lru_cache(maxsize=1)
def _parser():
    try:
        import tree_sitter_cuda
        from tree_sitter import Language, Parser
    except ImportError as exc:  # pragma: no cover - core dependency
        raise CudaParserUnavailable(
            f"CUDA analysis needs the packages tree-sitter and tree-sitter-cuda ({exc})"
        ) from exc
    return Parser(Language(tree_sitter_cuda.language()))


def parse(source: bytes):
    """Parse CUDA source bytes (UTF-8) into a tree-sitter Tree."""
    return _parser().parse(source)
