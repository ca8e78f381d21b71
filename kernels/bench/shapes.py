"""Shapes written as text: `4096x4096,16384x4096` (the CLI's `--shapes`, the editor's
`tritonify.benchmark.shapes` setting). No torch here: the language server reads settings with it."""
from __future__ import annotations


def parse_shapes(text: str | None) -> list[list[int]] | None:
    """``4096x4096,16384x4096`` -> [[4096, 4096], [16384, 4096]]; ValueError with the bad piece."""
    if not text:
        return None
    shapes = []
    for piece in text.replace(";", ",").split(","):
        piece = piece.strip().lower()
        if not piece:
            continue
        try:
            dims = [int(d) for d in piece.replace("*", "x").split("x")]
        except ValueError:
            raise ValueError(f"bad shape {piece!r}: write dimensions as 4096x4096") from None
        if not dims or any(d <= 0 for d in dims):
            raise ValueError(f"bad shape {piece!r}: dimensions must be positive")
        shapes.append(dims)
    return shapes or None
