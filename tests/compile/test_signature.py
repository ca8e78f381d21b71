"""Static signature inference: pointers, scalars, constexpr values and where each came from."""
import ast
import textwrap

import pytest
from tritonify.diagnostics.compile.signature import (
    SignatureError,
    build_plan,
    find_kernel,
    parse_assignments,
)
from tritonify.kernels.bench.discovery import contract_dtype

SRC = textwrap.dedent('''
    import triton
    import triton.language as tl

    @triton.jit
    def k(X, out_ptr, W, stride, n_cols, eps, ONE, BLOCK: tl.constexpr, HAS_BIAS: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        base = X + row * stride
        x = tl.load(base + cols, mask=cols < n_cols)
        w_ptrs = W + cols
        w = tl.load(w_ptrs)
        tl.store(out_ptr + row * stride + cols, x * w * eps * ONE)

    def launch(x, y, w):
        k[(8,)](x, y, w, x.stride(0), 1000, 1e-6, 1, BLOCK=1024, num_warps=8)
''')


def plan(src=SRC, name="k", **kw):
    tree = ast.parse(src)
    kernel, _, imports = find_kernel(tree, name)
    return build_plan(tree, kernel, imports, **kw)


def test_pointers_by_use_and_name():
    p = plan()
    assert p.signature["X"] == "*fp32" and p.signature["W"] == "*fp32" and p.signature["out_ptr"] == "*fp32"
    assert p.signature["stride"] == "i32" and p.signature["n_cols"] == "i32"
    assert p.signature["eps"] == "fp32"


def test_launch_values_and_triton_specialisation():
    p = plan()
    assert p.base_constexprs["BLOCK"] == 1024 and p.base_options == {"num_warps": 8}
    assert p.scalars["n_cols"] == 1000 and "n_cols" not in p.divisible      # 1000 % 16 != 0
    assert p.base_constexprs["ONE"] == 1                                     # an int equal to 1 is a constant
    assert "stride" in p.divisible and "X" in p.divisible                   # default 4096, aligned pointers
    assert p.base_constexprs["HAS_BIAS"] is False
    assert any("HAS_BIAS=False" in a for a in p.assumptions)


def test_no_divisibility_hints():
    p = plan(divisible=False)
    assert p.divisible == [] and any("overstated" in a for a in p.assumptions)


def test_overrides_and_types():
    p = plan(overrides={"BLOCK": 256, "num_warps": 2}, arg_types={"X": "*bf16", "n_cols": "i64"})
    assert p.overrides == {"BLOCK": 256, "num_warps": 2}
    assert p.signature["X"] == "*bf16" and p.signature["n_cols"] == "i64"
    with pytest.raises(SignatureError, match="no parameter"):
        plan(overrides={"NOPE": 1})
    with pytest.raises(SignatureError, match="unknown type"):
        plan(arg_types={"n_cols": "float128"})


def test_contract_dtype_is_used(tmp_path):
    kernel_file = tmp_path / "norm.py"
    kernel_file.write_text(SRC)
    (tmp_path / "norm_contract.py").write_text(
        "from tritonify.kernels.bench import Contract\n"
        "CONTRACT = Contract(kernel='k', entry=None, inputs=None, reference=None, dtype='bfloat16')\n")
    found = contract_dtype(kernel_file, "k")
    assert found == ("bfloat16", "norm_contract.py:2")
    p = plan(contract_dtype=found)
    assert p.signature["X"] == "*bf16"
    assert any("benchmark contract norm_contract.py:2" in a for a in p.assumptions)


def test_autotune_sites_by_index():
    src = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4),
                                  triton.Config({"BLOCK": 256}, num_warps=8, num_stages=2)], key=["n"])
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), 0.0)
    ''')
    p = plan(src)
    assert p.variants is None          # the worker expands the autotune configs
    assert [s.kwargs for s in p.config_sites] == [{"BLOCK": 128}, {"BLOCK": 256}]
    assert p.config_sites[1].options == {"num_warps": 8, "num_stages": 2}
    assert p.config_sites[1].node.lineno == 6


def test_parse_assignments():
    assert parse_assignments("BLOCK=1024,num_warps=8 EVEN=True") == {"BLOCK": 1024, "num_warps": 8, "EVEN": True}
    assert parse_assignments("x_ptr=*bf16") == {"x_ptr": "*bf16"}
    with pytest.raises(SignatureError):
        parse_assignments("BLOCK")


def test_config_list_wrapped_in_a_filter_call_is_matched_by_value():
    src = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.autotune(configs=_only_on_gpu([triton.Config({"R": 1}, num_warps=8),
                                               triton.Config({"R": 2}, num_warps=8, num_stages=2)]), key=["n"])
        @triton.jit
        def k(x_ptr, n, R: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, R), 0.0)
    ''')
    sites = plan(src).config_sites
    assert len(sites) == 2
    assert sites[1].matches({"kwargs": {"R": 2}, "num_warps": 8, "num_stages": 2, "num_ctas": 1})
    assert not sites[1].matches({"kwargs": {"R": 2}, "num_warps": 8, "num_stages": 3, "num_ctas": 1})
    assert sites[0].matches({"kwargs": {"R": 1}, "num_warps": 8, "num_stages": 3, "num_ctas": 1, "maxnreg": None})


def test_partial_config_applies_to_every_autotune_config():
    src = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.autotune(configs=[triton.Config({"R": 1}, num_warps=8)], key=["n"])
        @triton.jit
        def k(x_ptr, n, R: tl.constexpr, BLOCK_N: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK_N), 0.0)
    ''')
    partial = plan(src, overrides={"BLOCK_N": 4096})
    assert partial.variants is None and partial.overrides == {"BLOCK_N": 4096}
    full = plan(src, overrides={"R": 2, "BLOCK_N": 4096})
    assert full.variants is not None and any("replaces the autotune configs" in a for a in full.assumptions)


def test_integer_pointers_and_dimension_defaults_by_name():
    src = textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def k(logits_ptr, labels_ptr, Lock, HEAD_DIM: tl.constexpr):
            label = tl.load(labels_ptr)
            while tl.atomic_cas(Lock, 0, 1) == 1:
                pass
            tl.store(logits_ptr + label + tl.arange(0, HEAD_DIM), 0.0)
    ''')
    p = plan(src)
    assert p.signature["labels_ptr"] == "*i64" and p.signature["Lock"] == "*i32"
    assert p.signature["logits_ptr"] == "*fp32"
    assert p.base_constexprs["HEAD_DIM"] == 64
