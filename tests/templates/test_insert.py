"""Inserting a template into a file: merged imports, placement, no duplicates (pure text edits)."""
from __future__ import annotations

import ast
from dataclasses import dataclass

from tritonify.diagnostics.fixes import apply_edits
from tritonify.kernels.templates.insert import template_insert_edits
from tritonify.kernels.templates import get_template, list_templates

from tests.lintutil import apply_template

USER_FILE = '''"""My model."""
from __future__ import annotations

import torch
from triton import language as tl


def model(x):
    y = x * 2
    return y
'''


def _imports(text: str) -> list[str]:
    return [ast.unparse(s) for s in ast.parse(text).body if isinstance(s, (ast.Import, ast.ImportFrom))]


def test_imports_are_merged_never_duplicated():
    out = apply_template(USER_FILE, get_template("rms_norm"), 12)
    ast.parse(out)
    imports = _imports(out)
    assert imports.count("import torch") == 1
    assert "import triton.language as tl" not in imports  # `from triton import language as tl` binds the same
    assert "import os" in imports and "import triton" in imports
    assert len(imports) == len(set(imports))
    # the new imports join the file's import block, before any code
    tree = ast.parse(out)
    first_code = next(i for i, s in enumerate(tree.body) if not isinstance(s, (ast.Import, ast.ImportFrom, ast.Expr)))
    assert all(isinstance(s, (ast.Import, ast.ImportFrom, ast.Expr)) for s in tree.body[:first_code])


def test_a_file_with_every_import_gets_only_the_body():
    text = "import os\n\nimport torch\nimport triton\nimport triton.language as tl\n"
    edits = template_insert_edits(text, get_template("swiglu"), 6)
    assert len(edits) == 1 and "def swiglu(" in edits[0].new_text


def test_inserting_the_same_template_twice_adds_nothing():
    once = apply_template(USER_FILE, get_template("swiglu"), 12)
    assert apply_template(once, get_template("swiglu"), len(once.splitlines()) + 1) == once


def test_shared_helpers_are_not_repeated_and_every_template_fits_in_one_file():
    text = "import torch\n"
    for t in list_templates():
        text = apply_template(text, t, len(text.splitlines()) + 1)
    tree = ast.parse(text)
    top = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    duplicated = {n for n in top if top.count(n) > 1}
    assert not duplicated, duplicated
    assert top.count("_interpreting") == 1 and top.count("_autotune_configs") == 1
    for t in list_templates():
        assert t.name in top


def test_inside_a_function_the_body_goes_above_it():
    out = apply_template(USER_FILE, get_template("softmax"), 9)  # line 9 is inside model()
    ast.parse(out)
    assert out.index("def softmax(") < out.index("def model(")
    assert "    y = x * 2\n    return y\n" in out  # the function is intact


def test_above_the_imports_the_body_goes_below_them():
    out = apply_template(USER_FILE, get_template("softmax"), 1)
    ast.parse(out)
    assert out.index("from triton import language as tl") < out.index("def softmax(")
    assert out.startswith('"""My model."""\n')


def test_the_docstring_becomes_a_comment_and_the_module_docstring_stays():
    out = apply_template(USER_FILE, get_template("cross_entropy"), 12)
    assert ast.get_docstring(ast.parse(out)) == "My model."
    assert "# Fused cross-entropy for training: the gradient is computed in the forward pass" in out


def test_renamed_insertion_and_an_empty_file():
    out = apply_template("", get_template("tanh_glu"), 1, name="gate_tanh", hidden="2048")
    tree = ast.parse(out)
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"gate_tanh", "gate_tanh_reference", "_gate_tanh_fwd_kernel"} <= names
    assert "GATE_TANH_HIDDEN = 2048" in out and out.startswith("import os\n")


def test_snippet_insertion_keeps_import_edits_plain():
    edits = template_insert_edits(USER_FILE, get_template("rms_norm"), 12, snippet=True)
    *imports, body = edits
    assert imports and all("$" not in e.new_text for e in imports)
    assert "${1:rms_norm}" in body.new_text


def test_a_file_that_does_not_parse_still_gets_an_insertion():
    text = "def broken(:\n    pass\n"
    edits = template_insert_edits(text, get_template("relu2_glu"), 3)
    out = apply_edits(text, edits)
    assert "def relu2_glu(" in out and "def broken(:" in out


@dataclass
class _PlainTemplate:  # any object with name and source() works: what the language server may pass
    name: str = "plain"

    def source(self) -> str:
        return "import math\n\n\ndef plain_helper():\n    return math.pi\n"


def test_a_plain_template_object_is_inserted_with_merged_imports():
    out = apply_template("import math\n\nx = 1\n", _PlainTemplate(), 4)
    assert out.count("import math") == 1 and "def plain_helper():" in out
    ast.parse(out)
