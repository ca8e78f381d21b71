from tritonify.diagnostics.model import Severity
from tests.lintutil import lint, lint_fixture, marked_lines


def test_fixture_flags_exactly_the_marked_lines():
    findings = lint_fixture("TRI037.py", "TRI037")
    assert [f.line for f in findings] == marked_lines("TRI037.py", "TRI037")
    assert all(f.severity is Severity.INFO and "tritonify template moe" in f.message for f in findings)


LOOP = """
import torch

def experts_forward(x, ids, w1, w2):
    out = torch.zeros_like(x)
    for e in range(w1.shape[0]):
        rows, slot = torch.where(ids == e)
        out.index_add_(0, rows, (x[rows] @ w1[e].t()).relu() @ w2[e].t())
    return out
"""


def test_a_loop_with_selection_matmul_and_scatter_is_reported():
    (finding,) = lint(LOOP, "TRI037")
    assert finding.line == 6


def test_loops_without_the_selection_or_the_scatter_are_quiet():
    assert not lint(LOOP.replace("torch.where(ids == e)", "torch.where(ids > 0)"), "TRI037")
    assert not lint(LOOP.replace("out.index_add_(0, rows, ", "print(").replace("w2[e].t())", "w2[e].t()))"), "TRI037")


def test_inference_engine_files_and_tests_are_quiet():
    assert not lint("import vllm\n" + LOOP, "TRI037")
    assert not lint(LOOP, "TRI037", path="tests/test_moe.py")


def test_its_findings_name_a_template_that_exists_and_the_command_the_message_names_prints_it():
    """The rule names the MoE template (the editor's quick fix inserts it: tests/templates/
    test_code_action.py); the text `tritonify template moe` prints is a module that parses and defines
    the drop-in for the loop."""
    import ast

    from tritonify.diagnostics.registry import get_rule
    from tritonify.kernels.templates import get_template

    (finding,) = lint(LOOP, "TRI037")
    assert "`tritonify template moe`" in finding.message
    assert "LigerFusedMoEFunction.apply(" in finding.message, "Liger first: 0.8.5 ships SwiGLU fused MoE"
    template = get_template(get_rule("TRI037").rule.template)
    tree = ast.parse(template.render())
    assert {"moe", "moe_experts", "moe_reference"} <= {s.name for s in tree.body if isinstance(s, ast.FunctionDef)}
