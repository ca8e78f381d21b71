"""Real compiles of the fixture kernels for sm_90 (no GPU): known figures, findings on the right lines."""
from __future__ import annotations

import re
import time

import pytest
from tritonify.diagnostics.compile.findings import inspect_findings
from tritonify.diagnostics.compile.result import InspectError, assembly_view

from tests.compile.conftest import FIXTURE, marked_line

triton = pytest.importorskip("triton")
EXACT = triton.__version__ == "3.9.0"   # figures below were read from triton 3.9.0's bundled ptxas


@pytest.fixture(scope="module")
def softmax(inspect_fixture):
    return inspect_fixture("row_softmax")


@pytest.fixture(scope="module")
def matmul(inspect_fixture):
    return inspect_fixture("matmul", dtype="fp16")


@pytest.fixture(scope="module")
def scale(inspect_fixture):
    return inspect_fixture("scale_kernel")


def test_one_result_per_autotune_config_on_its_line(softmax):
    assert softmax.error is None
    assert [v.index for v in softmax.variants] == [0, 1]
    assert softmax.variants[0].position.line == marked_line("CLEAN")
    assert softmax.variants[1].position.line == marked_line("SPILLS")
    assert softmax.variants[1].constexprs == {"BLOCK": 65536}
    assert softmax.variants[1].num_warps == 32


def test_spilling_config_spills_and_clean_one_does_not(softmax):
    clean, spilling = softmax.variants
    assert not clean.resources.spills and clean.resources.stack == 0
    assert spilling.resources.spills
    assert spilling.resources.spill_stores > 0 and spilling.resources.spill_loads > 0
    # 1024 threads per block cap registers at 65536 / 1024 = 64
    assert spilling.resources.registers <= 64
    if EXACT:
        assert clean.resources.registers == 48
        assert (spilling.resources.registers, spilling.resources.spill_stores,
                spilling.resources.spill_loads, spilling.resources.stack) == (64, 212, 216, 168)


def test_spill_finding_on_config_line_with_warps_fix(softmax):
    findings = inspect_findings(softmax)
    k = [f for f in findings if f.code == "CMP-K"]
    assert len(k) == 1
    assert k[0].line == marked_line("SPILLS")
    assert "num_warps=16" in k[0].message
    fix = k[0].fixes[0]
    assert fix.title == "Use num_warps=16"
    (edit,) = fix.edits
    line_text = FIXTURE.read_text().splitlines()[edit.start_line - 1]
    assert edit.start_line == marked_line("SPILLS")
    assert line_text[edit.start_column:edit.end_column] == "32"
    assert edit.new_text == "16"
    assert not [f for f in findings if f.line == marked_line("CLEAN")]


def test_shared_memory_limited_config_gets_cmp_j_with_fewer_stages(matmul):
    # both configs although the list is cut to one without a GPU; each placed on its own line
    clean, deep = matmul.variants
    assert (clean.position.line, deep.position.line) == (marked_line("MM-CLEAN"), marked_line("LOW-SMEM"))
    assert deep.occupancy.limiter == "shared memory"
    assert deep.occupancy.percent < 20 <= clean.occupancy.percent
    # five stages of a 64x64 fp16 A tile and a 64x64 fp16 B tile
    assert deep.resources.dynamic_shared == 5 * 2 * 64 * 64 * 2
    findings = inspect_findings(matmul)
    j = [f for f in findings if f.code == "CMP-J"]
    assert [f.line for f in j] == [marked_line("LOW-SMEM")]
    assert j[0].fixes[0].title == "Use num_stages=4"
    assert not [f for f in findings if f.code == "CMP-K"]


def test_main_loop_is_the_k_loop(matmul):
    lines = FIXTURE.read_text().splitlines()
    loop_line = next(i for i, t in enumerate(lines, 1) if "for _ in range(0, K, BK)" in t)
    view = assembly_view(matmul, "sass", 0)
    assert view.main_loop is not None and view.main_loop["instructions"] > 20
    first, last = view.main_loop["source_lines"]
    assert loop_line <= first and last <= loop_line + 5
    dot_line = next(i for i, t in enumerate(lines, 1) if "tl.dot(a, b, acc)" in t)
    assert any("HGMMA" in view.text.splitlines()[n - 1] or "HMMA" in view.text.splitlines()[n - 1]
               for n in view.by_source_line[dot_line])
    ptx = assembly_view(matmul, "ptx", 0)
    ptx_lines = ptx.text.splitlines()
    dot_ptx = [ptx_lines[i] for i, src in enumerate(ptx.line_map) if src == dot_line]
    is_mma = re.compile(r"\bw?gmma\.mma_async|\bmma\.sync").search
    assert any(is_mma(text) for text in dot_ptx)                 # the tensor-core instructions of the tl.dot
    assert not any(is_mma(ptx_lines[i]) for i, src in enumerate(ptx.line_map) if src not in (dot_line, None))


def test_compile_error_carries_compilers_message_on_its_line(inspect_fixture):
    result = inspect_fixture("broken_kernel")
    (variant,) = result.variants
    assert variant.resources is None
    assert "invalid axis" in variant.error["message"]
    (finding,) = inspect_findings(result)
    assert finding.code == "CMP-FAIL" and finding.severity.value == "error"
    assert finding.line == marked_line("FAIL")
    with pytest.raises(InspectError):
        assembly_view(result, "ptx")


def test_helpers_constexpr_globals_and_launch_values(scale):
    (v,) = scale.variants
    assert v.error is None, v.error
    assert v.constexprs["BLOCK"] == 2048 and v.num_warps == 8       # from the launch in the file
    assert any("launch on line" in a for a in scale.assumptions)
    # the top-level program (torch.randn(..., device="cuda"), print(...)) was not run
    assert scale.skipped == []


def test_divisibility_hints_change_the_code(scale, inspect_fixture):
    plain = inspect_fixture("scale_kernel", divisible=False)
    with_hints = assembly_view(scale, "ptx").text
    without = assembly_view(plain, "ptx").text
    assert "ld.global.v4" in with_hints and "ld.global.v4" not in without
    assert any("no divisibility hints" in a for a in plain.assumptions)


@pytest.mark.parametrize("target", ["sm_80", "sm_100"])
def test_other_targets_compile(inspect_fixture, target):
    result = inspect_fixture("scale_kernel", target=target)
    (v,) = result.variants
    assert v.error is None and v.resources.registers > 0
    assert f".target {target}" in v.listings["ptx"]


def test_cache_hit_skips_the_compiler(inspect_fixture, softmax):
    started = time.monotonic()
    again = inspect_fixture("row_softmax")
    assert again.cached
    assert time.monotonic() - started < 1.5      # a compile of these two configs takes seconds
    assert [v.resources.registers for v in again.variants] == [v.resources.registers for v in softmax.variants]


def test_timeout_stops_the_worker(inspect_fixture):
    result = inspect_fixture("row_softmax", timeout=0.2, use_cache=False)
    assert result.error["kind"] == "timeout"
    (finding,) = inspect_findings(result)
    assert finding.code == "CMP-FAIL" and "stopped" in finding.message


def test_untrusted_workspace_is_refused(inspect_fixture):
    with pytest.raises(InspectError, match="trusted"):
        inspect_fixture("row_softmax", trusted=False)


def test_error_in_a_helper_is_placed_in_the_helper(inspect_fixture):
    result = inspect_fixture("helper_error_kernel", overrides={"BLOCK": 128})
    (finding,) = inspect_findings(result)
    assert finding.code == "CMP-FAIL"
    assert finding.line == marked_line("FAIL-HELPER")
    assert "invalid axis" in finding.message


def test_heuristics_values_are_computed(inspect_fixture):
    result = inspect_fixture("even_kernel")
    (v,) = result.variants
    assert v.error is None
    assert v.constexprs["EVEN"] is True          # n = 4096 assumed, BLOCK = 1024 by default
    assert any("@triton.heuristics" in note for note in v.notes)
