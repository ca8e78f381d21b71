"""Where the real-editor test types into a real-world file: the 1-based line of the first
one-line statement of the largest top-level `@triton.jit` kernel, and that kernel's and another
kernel's first body line (for Profile, run with the cursor inside each). Reads the file with
`ast` only; nothing of it runs. Prints `LINE KERNEL_LINE OTHER_KERNEL_LINE`."""
from __future__ import annotations

import ast
import sys


def jitted(node: ast.AST) -> bool:
    return isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list)


def main(path: str) -> int:
    tree = ast.parse(open(path, encoding="utf-8").read())
    kernels = sorted((n for n in tree.body if jitted(n)), key=lambda n: n.end_lineno - n.lineno, reverse=True)
    if len(kernels) < 2:
        print(f"{path}: fewer than two top-level kernels", file=sys.stderr)
        return 1
    largest = kernels[0]
    line = next(s.lineno for s in largest.body
                if isinstance(s, (ast.Assign, ast.AugAssign)) and s.lineno == s.end_lineno)
    print(line, largest.body[0].lineno, kernels[1].body[0].lineno)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
