"""What the worker runs of a user's file, and what the cache key depends on (no compiles)."""
import ast
import textwrap

from tritonify.tools.compile import compile_child as worker
from tritonify.tools.compile.cache import (
    definitions_digest,
    load,
    result_key,
    store,
)

SRC = textwrap.dedent('''
    import torch
    import triton.language as tl
    try:
        from triton.language.extra.cuda import libdevice
    except ImportError:
        libdevice = None
    BLOCK = tl.constexpr(128)
    CONFIGS = get_autotune_configs()
    x = torch.randn(4096, device="cuda")
    main()
    for i in range(3):
        pass
    if __name__ == "__main__":
        run()
''')


def test_only_definitions_run():
    kept = worker._definitions(ast.parse(SRC).body)
    kinds = [type(s).__name__ for s in kept]
    assert kinds == ["Import", "Import", "Try", "Assign", "Assign"]
    assert [s.lineno for s in kept if isinstance(s, ast.Assign)] == [8, 9]   # constexpr and config builder


def test_definitions_execute_with_real_line_numbers(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import os\nA = int('3')\nB = open('x').read()\n\ndef f():\n    return A\nf()\n")
    namespace, skipped = worker.load_definitions(str(path), "tritonify_test_m")
    assert namespace["A"] == 3 and "B" not in namespace and skipped == []
    assert namespace["f"].__code__.co_firstlineno == 5


def test_digest_ignores_the_program_but_not_the_kernel():
    base = "import triton\n@triton.jit\ndef k(x):\n    pass\nprint(1)\n"
    assert definitions_digest(ast.parse(base), base) == definitions_digest(
        ast.parse(base.replace("print(1)", "print(2)")), base.replace("print(1)", "print(2)"))
    changed = base.replace("pass", "return")
    assert definitions_digest(ast.parse(base), base) != definitions_digest(ast.parse(changed), changed)


def test_key_depends_on_request_and_target(tmp_path):
    k1 = result_key("d", {"overrides": {"BLOCK": 1}}, 90, "py")
    assert k1 != result_key("d", {"overrides": {"BLOCK": 2}}, 90, "py")
    assert k1 != result_key("d", {"overrides": {"BLOCK": 1}}, 80, "py")
    assert load(k1, tmp_path) is None
    store(k1, {"ok": True}, tmp_path)
    assert load(k1, tmp_path) == {"ok": True}
