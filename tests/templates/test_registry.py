"""The template list and placeholder rendering (static: nothing here imports torch or triton)."""
from __future__ import annotations

import ast
import io
import subprocess
import sys
import tokenize

import pytest
from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.model import Severity
from tritonify.diagnostics.settings import Settings
from tritonify.kernels.templates import get_template, list_templates

EXPECTED = {"rms_norm", "add_rms_norm", "swiglu", "cross_entropy", "fused_linear_cross_entropy", "softmax",
            "linear_gelu", "tanh_glu", "relu2_glu", "geglu_sigmoid", "conv2d", "causal_conv1d", "moe"}


def _names(text: str) -> set[str]:
    """Identifiers, leaving out attribute names (``torch.softmax`` is not the template's)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    return {t.string for i, t in enumerate(tokens) if t.type == tokenize.NAME and not (i and tokens[i - 1].string == ".")}


def test_every_issue_template_is_listed_once_with_its_parts():
    templates = list_templates()
    assert {t.name for t in templates} == EXPECTED and len(templates) == len(EXPECTED)
    for t in templates:
        tree = ast.parse(t.source())
        defs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        assert any(n.endswith("_kernel") for n in defs), f"{t.name}: no kernel"
        assert t.name in defs and f"{t.name}_reference" in defs, f"{t.name}: launcher or reference missing"
        assert f"{t.name.upper()}_CONTRACT" in t.source(), f"{t.name}: no benchmark contract"
        assert "triton.autotune" in t.source(), f"{t.name}: no autotune configurations"
        assert t.ops and t.title and t.defaults()["name"] == t.name
        assert "libdevice" not in t.source().split('"""', 2)[2], f"{t.name}: libdevice breaks the interpreter"


def test_listing_does_not_import_torch():
    code = "import sys; from tritonify.kernels.templates import list_templates; list_templates(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_get_template_names_the_known_ones_when_missing():
    with pytest.raises(KeyError, match="rms_norm"):
        get_template("layer_norm")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_render_renames_every_name_and_keeps_other_code(name):
    t = get_template(name)
    text = t.render(name="my_op")
    ast.parse(text)
    names = _names(text)
    assert "my_op" in names and "_my_op_contract" in names and "MY_OP_CONTRACT" in names
    left = {n for n in names if n == t.prefix or n.startswith((t.prefix + "_", "_" + t.prefix + "_"))}
    assert not left, f"names not renamed: {left}"
    assert "torch" in names and "triton" in names  # imports untouched
    assert 'name="my_op"' in text and 'kernel="_my_op_' in text


def test_render_fills_size_and_dtype_and_keeps_defaults_when_not_given():
    t = get_template("rms_norm")
    assert t.render() == t.source()
    text = t.render(hidden="8192", dtype="float16")
    assert "RMS_NORM_HIDDEN = 8192\n" in text and 'RMS_NORM_DTYPE = "float16"\n' in text


def test_attribute_names_that_equal_the_prefix_are_not_renamed():
    text = get_template("softmax").render(name="fast_softmax")
    assert "torch.softmax(" in text and "def fast_softmax(" in text
    assert 'liger="softmax"' in text  # the Liger op name is data, not a name of the template


@pytest.mark.parametrize("bad,error", [({"name": "2x"}, ValueError), ({"name": "class"}, ValueError),
                                       ({"dtype": "int8"}, ValueError), ({"hidden": "-3"}, ValueError),
                                       ({"colour": "red"}, KeyError)])
def test_bad_placeholders_are_refused(bad, error):
    with pytest.raises(error):
        get_template("swiglu").render(**bad)


def test_snippet_has_mirrored_name_tab_stops_and_escapes_literals():
    snip = get_template("rms_norm").snippet()
    assert snip.count("${1:rms_norm}") == 1
    assert "def $1(" in snip and "_$1_fwd_kernel" in snip
    assert "${1/(.*)/${1:/upcase}/}_HIDDEN = ${2:4096}" in snip
    assert '${1/(.*)/${1:/upcase}/}_DTYPE = "${3|bfloat16,float16,float32|}"' in snip
    assert "class ${1/(.*)/${1:/pascalcase}/}Function" in snip
    # literal braces and dollars are escaped: `{n_cols}` inside an f-string stays text
    assert "{n_cols\\}" in snip
    plain = snip.replace("${1:rms_norm}", "")
    assert "${" not in plain.replace("${1/", "").replace("${2:", "").replace("${3|", "").replace("${1:/", "")


def test_snippet_defaults_follow_the_given_values():
    snip = get_template("swiglu").snippet(name="gate_mul", dtype="float32", hidden="11008")
    assert "${1:gate_mul}" in snip and "${3|float32,bfloat16,float16|}" in snip and "${2:11008}" in snip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_an_inserted_template_gets_no_error_or_warning_from_the_default_set(name):
    # what a quick fix inserts into a user's file must not be flagged by the linter that offered it
    # (the conv2d template's self-resetting split-K counter was a TRI012 error before TRI012 read it)
    text = get_template(name).render(name="my_op")
    findings = [f for f in lint_text(text, f"/project/{name}_kernels.py", Settings()).findings
                if f.severity in (Severity.ERROR, Severity.WARNING)]
    assert findings == [], [(f.code, f.line, f.message[:80]) for f in findings]
