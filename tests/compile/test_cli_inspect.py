"""`tritonify inspect`: text and JSON output, exit codes, bad input without a traceback."""
import json

import pytest
from tritonify.cli.main import main

from tests.compile.conftest import FIXTURE, marked_line


def test_json_lists_configs_and_findings(compile_env, capsys):
    code = main(["inspect", f"{FIXTURE}::row_softmax", "--target", "sm_90", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert out["target"] == "sm_90" and len(out["variants"]) == 2
    assert out["variants"][1]["resources"]["spills"] is True
    assert out["variants"][0]["occupancy"]["limiter"] in ("registers", "shared memory", "warps", "blocks")
    (k,) = [f for f in out["findings"] if f["code"] == "CMP-K"]
    assert k["line"] == marked_line("SPILLS")
    assert out["assumptions"]


def test_text_and_per_line_listing(compile_env, capsys):
    code = main(["inspect", f"{FIXTURE}::row_softmax", "--target", "sm_90"])
    text = capsys.readouterr().out
    assert code == 1 and "CMP-K" in text and "occupancy" in text and "assumed:" in text
    assert main(["inspect", f"{FIXTURE}::row_softmax", "--target", "sm_90", "--show", "sass", "--per-line"]) == 0
    listing = capsys.readouterr().out
    assert "# ---- line" in listing and "tl.exp(x - m)" in listing


@pytest.mark.parametrize("argv,message", [
    (["inspect", "missing.py::k"], "no such file"),
    (["inspect", f"{FIXTURE}::nope"], "no @triton.jit kernel named 'nope'"),
    (["inspect", f"{FIXTURE}"], "name the kernel"),
    (["inspect", f"{FIXTURE}::row_softmax", "--target", "sm_70"], "not supported"),
    (["inspect", f"{FIXTURE}::row_softmax", "--config", "NOPE=1"], "no parameter 'NOPE'"),
])
def test_bad_input_is_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
