"""The H200 comparison script's pure parts (it runs on the GPU machine; not run in CI)."""
import importlib.util
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("compile_compare", ROOT / "gpu" / "compile" / "compare.py")
compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare)


def test_specialization_is_read_back_from_the_compiled_source():
    src = SimpleNamespace(signature={"x_ptr": "*fp16", "n": "i32", "one": "constexpr", "BLOCK": "constexpr"},
                          constants={(2,): 1, (3,): SimpleNamespace(value=1024)},
                          attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]})
    ck = SimpleNamespace(src=src, metadata=SimpleNamespace(num_warps=8, num_stages=2, maxnreg=None, num_ctas=1))
    spec = compare.specialization_of(ck, ["x_ptr", "n", "one", "BLOCK"])
    assert spec == {"signature": src.signature, "constexprs": {"one": 1, "BLOCK": 1024},
                    "divisible": ["n", "x_ptr"], "options": {"num_warps": 8, "num_stages": 2}}


def test_ptx_comparison_ignores_only_source_paths():
    a = '.file\t1 "/a/k.py"\n\tadd.s32 %r1, %r2, 1;   // k.py:3:4\n.section\t.debug_info\n{\n.b8 47\n}\n'
    b = '.file\t1 "/tmp/x/k.py"\n\tadd.s32 %r1, %r2, 1;   // k.py:3:4\n.section\t.debug_info\n{\n.b8 116\n}\n'
    assert compare._loc_free(a) == compare._loc_free(b)
    assert compare._loc_free(a) != compare._loc_free(a.replace("add.s32", "sub.s32"))
