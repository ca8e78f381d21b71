"""Line findings for the editor, and the code actions behind them."""
from tritonify.diagnostics.fixes import apply_edits
from tritonify.diagnostics.model import Severity
from tritonify.diagnostics.ncu.code_actions import cast_back_to_fp32, fixes_for, grid_to_sm_count, more_stages, spill_warps
from tritonify.diagnostics.ncu.findings import line_findings
from tritonify.diagnostics.ncu.paths import map_source_path

from .helpers import FIXTURES, all_diagnoses, diagnosis


def test_report_paths_map_onto_local_files(tmp_path):
    recorded = "/some/cluster/home/user/proj/gpu/ncu/planted_triton.py"
    assert map_source_path(recorded, [FIXTURES]) == str(FIXTURES / "planted_triton.py")
    assert map_source_path("/nowhere/x.py", [tmp_path]) == "/nowhere/x.py"


def test_every_planted_pattern_becomes_a_finding_on_its_line():
    from .helpers import manifest

    findings = line_findings(list(all_diagnoses()), roots=[FIXTURES])
    for case in manifest():
        if case["role"] != "planted":
            continue
        (letter, lines), = case["plants"].items()
        mine = [f for f in findings if f.code == letter and f"{case['kernel']} " in f.message]
        assert mine, case["kernel"]
        assert mine[0].line in set(lines) | {case["def_line"]}
        assert mine[0].severity in (Severity.WARNING, Severity.INFO)
        assert mine[0].path.endswith(case["file"])


def test_findings_carry_columns_url_and_hints():
    (c,) = [f for f in line_findings([diagnosis("planted_c_uncoalesced")], roots=[FIXTURES]) if f.code == "C"]
    text = (FIXTURES / "planted_triton.py").read_text().splitlines()[c.line - 1]
    assert c.column == len(text) - len(text.lstrip()) and c.end_column == len(text)
    assert c.url and c.url.endswith("patterns/C.md")
    assert "fix:" in c.message
    a = line_findings([diagnosis("planted_a_small_grid")], roots=[FIXTURES])
    j = [f for f in a if f.code == "J"]
    assert j and all(f.severity == Severity.HINT for f in j)  # explained by A


def test_no_findings_for_clean_kernels():
    assert line_findings([diagnosis("control_copy"), diagnosis("cuda_control_h_padded")], roots=[FIXTURES]) == []


def test_fp64_code_action_on_the_planted_kernel():
    (l,) = [f for f in line_findings([diagnosis("planted_l_fp64")], roots=[FIXTURES]) if f.code == "L" and f.fixes]
    text = (FIXTURES / "planted_triton.py").read_text()
    fixed = apply_edits(text, [e for fx in l.fixes for e in fx.edits])
    assert "y = x.to(tl.float32)  # PLANT: L" in fixed and "tl.float64" not in fixed.split("def planted_l_fp64")[1].split("def ")[0]


def test_cuda_double_literals_get_an_f():
    src = "void f() {\n  for (int k = 0; k < 32; ++k) v = v * 0.9999 + 0.0001;  // hot\n  w = 1.0f;\n}\n"
    (fx,) = cast_back_to_fp32(src, 2, cuda=True)
    fixed = apply_edits(src, fx.edits)
    assert "v * 0.9999f + 0.0001f;  // hot" in fixed and "k < 32" in fixed
    assert cast_back_to_fp32(src, 3, cuda=True) == []  # already fp32


def test_launch_parameter_actions():
    src = "k[grid](a, num_warps=8, num_stages=1)\ncfg = triton.Config({}, num_warps=1, num_stages=4)\n"
    stages = apply_edits(src, [e for f in more_stages(src) for e in f.edits])
    assert "num_stages=3)\n" in stages and "num_stages=4" in stages
    warps = apply_edits(src, [e for f in spill_warps(src) for e in f.edits])
    assert "num_warps=4, num_stages=1" in warps and "num_warps=4, num_stages=4" in warps
    assert fixes_for("J", src, [], limiter="shared_mem")[0].edits[0].new_text == "num_stages=2"
    assert fixes_for("J", src, [], limiter="registers") == []


def test_grid_to_sm_count_only_for_grid_stride_kernels():
    persistent = "for s in range(pid, n, tl.num_programs(0)):\n    pass\nk[(16,)](x)\nk[(512,)](x)\n"
    (fx,) = grid_to_sm_count(persistent, 132)
    assert "multi_processor_count" in fx.edits[0].new_text and fx.edits[0].start_line == 3
    assert grid_to_sm_count("k[(16,)](x)\n", 132) == []
