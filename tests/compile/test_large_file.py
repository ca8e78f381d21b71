"""`tritonify inspect` on a 1 MB file is bounded: the cache key of the definitions is linear in
the file's size (it split the whole text once per statement: 30,000 statements took minutes)."""
from __future__ import annotations

import ast
import time

from tritonify.tools.compile.cache import definitions_digest

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

'''


def test_digest_of_a_one_megabyte_file_takes_well_under_a_second_per_megabyte():
    text = KERNEL + "".join(f"value_number_{i} = {i} + {i}  # filler\n" for i in range(30_000))
    assert len(text) > 1_000_000
    tree = ast.parse(text)
    started = time.monotonic()
    digest = definitions_digest(tree, text)
    assert time.monotonic() - started < 5.0
    # the key still follows the definitions: an edit inside one changes it, one outside does not
    edited = text.replace("value_number_7 = 7 + 7", "value_number_7 = 7 + 8")
    assert definitions_digest(ast.parse(edited), edited) != digest
    commented = text + "# a trailing comment\n"
    assert definitions_digest(ast.parse(commented), commented) == digest


def test_digest_reads_each_statement_with_ast_line_breaks():
    """A form feed or U+2028 inside a statement is not a line break for ast: the statement's
    text is hashed whole, and a change in its second half changes the key."""
    a = "import triton\nX = 'a\u2028b'  # \x0c tail\nY = 1\r\nZ = 2\r"
    b = a.replace("tail", "TAIL")
    assert definitions_digest(ast.parse(a), a) != definitions_digest(ast.parse(b), b)
