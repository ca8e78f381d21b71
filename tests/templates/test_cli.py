"""`tritonify template --list` and `tritonify template NAME`."""
from __future__ import annotations

import ast

from tritonify.kernels.templates import list_templates
from tritonify.cli.main import main


def test_list_prints_one_template_per_line(capsys):
    assert main(["template", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [t.name for t in list_templates()]


def test_name_prints_the_module_as_python(capsys):
    assert main(["template", "rms_norm"]) == 0
    out = capsys.readouterr().out
    ast.parse(out)
    assert "def rms_norm(" in out and "_rms_norm_fwd_kernel" in out


def test_placeholders_and_snippet(capsys):
    assert main(["template", "swiglu", "--set", "name=gate_mul", "--set", "dtype=float16"]) == 0
    out = capsys.readouterr().out
    assert "def gate_mul(" in out and 'GATE_MUL_DTYPE = "float16"' in out
    assert main(["template", "swiglu", "--snippet"]) == 0
    assert "${1:swiglu}" in capsys.readouterr().out


def test_bad_input_gets_a_message_not_a_traceback(capsys):
    assert main(["template", "layer_norm"]) == 2
    assert "no template named 'layer_norm'" in capsys.readouterr().err
    assert main(["template"]) == 2
    assert "--list" in capsys.readouterr().err
    assert main(["template", "swiglu", "--set", "dtype=int8"]) == 2
    err = capsys.readouterr().err
    assert "int8" in err and "Traceback" not in err
    assert main(["template", "swiglu", "--set", "oops"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err
