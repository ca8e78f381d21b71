"""Parsing the raw, details and source pages exported by ncu 2025.3.1 on the H200."""
import pytest

from tritonify.diagnostics.ncu.details_page import parse_details
from tritonify.diagnostics.ncu.raw_page import PageError, parse_raw
from tritonify.diagnostics.ncu.source_page import is_library_path, parse_source

from .helpers import manifest, source_csv, text


def test_raw_page_has_one_row_per_profiled_launch():
    launches = parse_raw(text("raw_base.csv"))
    assert sorted(l.kernel for l in launches) == sorted(m["kernel"] for m in manifest())
    assert [l.id for l in launches] == [str(i) for i in range(28)]
    first = launches[0]
    assert first.id == "0" and first.kernel == "control_copy"
    assert first.grid == (16384, 1, 1) and first.block == (256, 1, 1) and first.cc == "9.0"
    assert "tritonify" in first.nvtx  # the NVTX range that selected the measured launch
    assert first.metrics["launch__grid_size"] == 16384
    assert first.metrics["launch__sm_count"] == 132
    assert first.text["device__attribute_display_name"] == "NVIDIA H200"
    assert "sass__inst_executed_register_spilling_mem_local" in first.text  # "no data" kept as text


def test_raw_page_tolerates_leading_ncu_lines_and_rejects_other_text():
    body = text("raw_base.csv")
    assert len(parse_raw("==PROF== Disconnected from process 1\n" + body)) == 28
    with pytest.raises(PageError, match="raw page"):
        parse_raw(text("details.csv"))
    with pytest.raises(PageError):
        parse_raw("hello,world\n1,2\n")


def test_full_set_raw_page_parses():
    (launch,) = parse_raw(text("raw_full_planted_c_uncoalesced.csv"))
    assert launch.kernel == "planted_c_uncoalesced"
    assert len(launch.metrics) > 1500


def test_details_page_rules():
    rules = parse_details(text("details.csv"))
    names = {r.name for r in rules}
    assert {"CPIStall", "UncoalescedGlobalAccess", "SharedMemoryConflicts", "ThreadDivergence",
            "TheoreticalOccupancy", "LaunchConfiguration"} <= names
    unc = [r for r in rules if r.name == "UncoalescedGlobalAccess" and r.kernel == "planted_c_uncoalesced"]
    assert unc and unc[0].type == "OPT" and unc[0].speedup == pytest.approx(75.24)
    assert "3670016 excessive sectors" in unc[0].description
    with pytest.raises(PageError, match="details page"):
        parse_details(text("raw_base.csv"))


def test_source_page_of_a_triton_kernel():
    page = parse_source(source_csv("planted_c_uncoalesced"))
    assert page.function == "planted_c_uncoalesced"
    assert page.kernel_file().endswith("gpu/ncu/planted_triton.py")
    lines = {l.line: l for l in page.lines}
    assert "tl.load(x_ptr + offs.to(tl.int64) * STRIDE" in lines[107].text
    loads = [i for i in page.instructions if i.line == 107 and i.opcode.startswith("LDG")]
    assert loads and loads[0].address_space == "Global" and loads[0].access == "Load"
    assert sum(i.value("L2 Theoretical Sectors Global Excessive") for i in page.instructions) == 3670016


def test_source_page_with_library_blocks():
    page = parse_source(source_csv("control_softmax"))
    assert len(page.files) == 2
    lib = [f for f in page.files if is_library_path(f)]
    assert lib and lib[0].endswith("triton/language/standard.py")
    assert page.kernel_file().endswith("planted_triton.py")


def test_source_page_of_cuda_names_the_cu_file():
    page = parse_source(source_csv("cuda_planted_h_bank_conflicts"))
    assert page.kernel_file().endswith("planted_cuda.cu")
    assert any(i.opcode == "LDS" for i in page.instructions)


def test_source_page_rejects_other_pages():
    with pytest.raises(PageError, match="source page"):
        parse_source(text("raw_base.csv"))


def test_opcode_drops_predicate_guard():
    from tritonify.diagnostics.ncu.source_page import SassInstruction

    assert SassInstruction(0, "@P0 LDG.E.128 R4, desc[UR4][R2.64]", "f", 1).opcode == "LDG.E.128"
    assert SassInstruction(0, "@!PT BRA 0x10", "f", 1).opcode == "BRA"
    assert SassInstruction(0, "      FFMA R1, R2, R3, R4", "f", 1).opcode == "FFMA"
