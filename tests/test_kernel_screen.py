"""The pre-parse screen (diagnostics/kernel_screen.py): a file is left unparsed only when it
cannot define a kernel. Every way a kernel reaches `triton.jit` without the text spelling `jit`
(a re-export under another name, a module attribute, an alias, the call form, a star import)
must keep the file parsed and its kernels found; a file with none of them is not parsed."""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.engine import lint_file, lint_text
from tritonify.diagnostics.kernel_screen import may_define_kernel
from tritonify.diagnostics.settings import Settings
from tritonify.diagnostics.source import SourceFile
from tritonify.diagnostics.workspace_index import WorkspaceIndex

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("TRITONIFY_CORPUS", Path.home() / ".cache" / "tritonify-realworld"))
ALL = Settings(select=("ALL",))

COMPAT = "import triton\nimport triton.language as tl\nkernel = triton.jit\n"
BODY = "(x_ptr, n, BLOCK: tl.constexpr):\n    tl.device_print('x', tl.load(x_ptr))\n"


def _package(tmp_path: Path, user: str, compat: str = COMPAT) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "compat.py").write_text(compat)
    (pkg / "user.py").write_text(user)
    return pkg / "user.py"


def _kernels(path: Path, index: WorkspaceIndex) -> list[str]:
    source = SourceFile.from_text(path.read_text(), str(path))
    return [k.name for k in PythonContext(source, workspace=index).kernels]


CASES = {
    "re-exported decorator": "from .compat import kernel, tl\n\n@kernel\ndef k" + BODY,
    "renamed on import": "from pkg.compat import kernel as deco, tl\n\n@deco\ndef k" + BODY,
    "module attribute": "from . import compat\ntl = compat.tl\n\n@compat.kernel\ndef k" + BODY,
    "import as": "import pkg.compat as c\ntl = c.tl\n\n@c.kernel\ndef k" + BODY,
    "whole import path": "import pkg.compat.kernel as k2\nfrom .compat import tl\n\n@k2\ndef k" + BODY,
    "alias of an attribute": "from . import compat\ntl = compat.tl\nk2 = compat.kernel\n\n@k2\ndef k" + BODY,
    "call form": "from . import compat\ntl = compat.tl\n\ndef f" + BODY + "\nk = compat.kernel(f)\n",
    "call form, comment before the argument": ("from . import compat\ntl = compat.tl\n\ndef f" + BODY
                                               + "\nk = compat.kernel(  # made a kernel here\n    f)\n"),
    "curried call form": ("from . import compat\ntl = compat.tl\n\ndef f" + BODY
                          + "\nk = compat.kernel(do_not_specialize=['n'])(f)\n"),
    "alias of an alias": "from . import compat\ntl = compat.tl\nk1 = compat.kernel\nk2 = k1\n\n@k2\ndef k" + BODY,
    "star import": "from .compat import *\n\n@kernel\ndef k" + BODY,
    "decorator over lines": "from . import compat\ntl = compat.tl\n\n@(\n    compat.kernel\n)\ndef k" + BODY,
    "import after try:": "try: from .compat import kernel, tl\nexcept ImportError: pass\n\n@kernel\ndef k" + BODY,
    "bracketed alias": "from . import compat\ntl = compat.tl\nk2 = (\n    compat.kernel  # the decorator\n)\n\n@k2\ndef k" + BODY,
    "alias broken over lines": "from . import compat\ntl = compat.tl\nk2 = (compat\n      .kernel)\n\n@k2\ndef k" + BODY,
    "partial alias": ("import functools\nfrom . import compat\ntl = compat.tl\n"
                      "k2 = functools.partial(\n    compat.kernel, do_not_specialize=['n'])\n\n@k2\ndef k" + BODY),
}


@pytest.mark.parametrize("name", CASES)
def test_kernels_reached_without_spelling_jit_are_screened_in(tmp_path: Path, name: str) -> None:
    user = _package(tmp_path, CASES[name])
    text = user.read_text()
    assert "jit" not in text
    index = WorkspaceIndex()
    assert _kernels(user, index), "the engine finds a kernel here (the premise of the case)"
    assert may_define_kernel(text, str(user), index)
    result = lint_file(user, ALL, index)
    assert result.parsed and any(f.code == "TRI022" for f in result.findings), name


def test_old_mac_line_breaks_and_form_feeds(tmp_path: Path) -> None:
    """Python reads "\\r" as a line break and a form feed as indentation: so does the screen."""
    text = CASES["re-exported decorator"].replace("\n", "\r").replace("@kernel", "\f@kernel")
    user = _package(tmp_path, text)
    index = WorkspaceIndex()
    assert _kernels(user, index) == ["k"]
    assert may_define_kernel(text, str(user), index)


def test_an_edited_reexport_is_seen(tmp_path: Path) -> None:
    """The screen asks the index, so the editor's text of the re-exporting module counts."""
    user = _package(tmp_path, CASES["re-exported decorator"], compat="import triton.language as tl\nkernel = print\n")
    index = WorkspaceIndex()
    assert not may_define_kernel(user.read_text(), str(user), index)
    index.update(tmp_path / "pkg" / "compat.py", COMPAT)
    assert may_define_kernel(user.read_text(), str(user), index)
    assert _kernels(user, index) == ["k"]


def test_a_file_that_cannot_define_a_kernel_is_not_parsed(tmp_path: Path) -> None:
    text = ("import torch\nimport triton\nfrom . import compat\n\nTABLE = {(1, 2): (3, 4)}\n\n"
            "@functools.lru_cache\ndef lookup(key):\n    return compat.table(TABLE[key])\n\n"
            "print(inspect.getsource(lookup))\n")
    user = _package(tmp_path, text)
    index = WorkspaceIndex()
    assert not may_define_kernel(text, str(user), index)
    result = lint_file(user, ALL, index)
    assert not result.parsed and result.findings == []


def test_host_rules_and_cuda_still_get_the_tree() -> None:
    """TRI023 (host code) and the embedded CUDA rules see files without kernels."""
    host = "import torch\n\ndef f(x, t):\n    return torch.nn.functional.cross_entropy(x, t)\n"
    assert lint_text(host, "model.py", ALL).parsed
    cuda = "from torch.utils.cpp_extension import load_inline\nSRC = 'double x;'\n"
    assert lint_text(cuda, "ext.py", ALL).parsed
    assert not lint_text(host, "model.py", Settings(select=("TRI001",))).parsed


def test_bytes_that_cannot_parse_are_still_reported() -> None:
    result = lint_text(b"import torch\nx = 1\x00\n", "x.py", ALL)
    assert [f.code for f in result.findings] == ["TRI000"]


def _screened_out_kernels(files: list[Path], index: WorkspaceIndex) -> list[str]:
    missed = []
    for f in files:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            source = SourceFile.from_bytes(f.read_bytes(), str(f))
        if source.tree is None:
            continue
        if PythonContext(source, workspace=index).kernels and not may_define_kernel(source.text, str(f), index):
            missed.append(str(f))
    return missed


def test_every_file_with_a_kernel_is_screened_in_examples_and_fixtures() -> None:
    files = sorted((ROOT / "examples").rglob("*.py")) + sorted((ROOT / "tests" / "fixtures").rglob("*.py")) \
        + sorted((ROOT / "tests" / "rules" / "fixtures").rglob("*.py"))
    assert _screened_out_kernels(files, WorkspaceIndex()) == []


@pytest.mark.skipif(not (CORPUS / "MANIFEST.json").is_file(), reason="real-world corpus not built")
def test_every_file_with_a_kernel_is_screened_in_the_corpus() -> None:
    index = WorkspaceIndex()
    files = [f for p in sorted(CORPUS.iterdir()) if p.is_dir() for f in sorted(p.rglob("*.py"))]
    assert len(files) > 2000
    assert _screened_out_kernels(files, index) == []


# Kernels in a text that spells `jit` without `@jit` / `@triton.jit` opening a line: the screen
# reads them through its steps, not its shortcut (a text with no such decorator is not parsed at once)
JIT_CASES = {
    "call form, triton imported": "import triton\nimport triton.language as tl\n\ndef f" + BODY + "\nk = triton.jit(f)\n",
    "call form, triton not imported": "import triton.language as tl\n\ndef f" + BODY + "\nk = triton.jit(f)\n",
    "alias of a jit factory": ("import triton\nimport triton.language as tl\nnospec = triton.jit(do_not_specialize=['n'])\n\n"
                               "@nospec\ndef k" + BODY),
    "alias of triton.jit": "import triton\nimport triton.language as tl\nj = triton.jit\n\n@j\ndef k" + BODY,
    "bare jit under a star import": "from triton import *\nimport triton.language as tl\n\ndef f" + BODY + "\nk = jit(f)\n",
    "bare jit, unbound": "import triton\nimport triton.language as tl\n\ndef f" + BODY + "\nk = jit(f)\n",
    "jit imported under another name": "from triton import jit as J\nimport triton.language as tl\n\n@J\ndef k" + BODY,
}


@pytest.mark.parametrize("name", JIT_CASES)
def test_kernels_in_a_text_that_spells_jit_are_screened_in(tmp_path: Path, name: str) -> None:
    user = _package(tmp_path, JIT_CASES[name])
    text = user.read_text()
    assert "jit" in text and "@jit" not in text and "@triton.jit" not in text
    index = WorkspaceIndex()
    assert _kernels(user, index), "the engine finds a kernel here (the premise of the case)"
    assert may_define_kernel(text, str(user), index)
    result = lint_file(user, ALL, index)
    assert result.parsed and any(f.code == "TRI022" for f in result.findings), name


NO_KERNEL_CASES = {
    # what torch and code generators spell: TorchScript, and Triton source in strings
    "torch.jit": "import torch\n\n@torch.jit.script\ndef f(x):\n    return x + 1\n\ng = torch.jit.trace(f, ())\n",
    "jit in a string": ("import triton\n\ndef emit(code):\n    code.writeline('@triton.jit')\n"
                        "    code.writeline(f'@triton.jit(do_not_specialize={1})')\n"),
    "jit in a docstring": 'import torch\n\ndef f(x):\n    """Unlike a triton.jit kernel, this runs eagerly."""\n    return x\n',
    # the word `import` where no import statement opens: a comment, a docstring, a nested import of other names
    "import in a comment": ("from . import compat\n\n# we import compat lazily: see compat.table\n"
                            "@functools.lru_cache\ndef lookup(key):\n    return compat.table(key)\n"),
    "import in a docstring": ('"""Helpers (do not import triton here)."""\nimport functools\n\n'
                              "@functools.cache\ndef f(x):\n    return x\n"),
    # `name=(` on its own line: a keyword argument (or an assignment) whose value is no name
    "keyword arguments over lines": ("from . import compat\n\ndef fn(x):\n    return x\n\ndef options():\n"
                                     "    return dict(\n        wrap=(\n            f'{fn} wrapped'\n        ),\n"
                                     "        partial=functools.partial(print, 'x'),\n    )\n\nk = wrap(fn)\n"),
    "a keyword before a bracket": ("from . import compat\n\ndef fn(x):\n    return x\n\nif (fn):\n    pass\n"
                                   "from .compat import (\n    fn as g,\n)\n"),
    "nested import of another name": ("import functools\n\ndef g():\n    if True: import os\n    return os\n\n"
                                      "@functools.cache\ndef f(x):\n    return x\n"),
}


@pytest.mark.parametrize("name", NO_KERNEL_CASES)
def test_a_text_with_no_kernel_is_not_parsed(tmp_path: Path, name: str) -> None:
    user = _package(tmp_path, NO_KERNEL_CASES[name])
    index = WorkspaceIndex()
    assert _kernels(user, index) == [], "no kernel here (the premise of the case)"
    assert not may_define_kernel(user.read_text(), str(user), index), name
    assert not lint_file(user, ALL, index).parsed


def test_the_word_import_before_a_candidate_keeps_the_file_parsed(tmp_path: Path) -> None:
    """`try: from .compat import kernel` (not where an import statement opens a line) binds the
    decorator's name: the screen cannot read it alone, so the file is parsed."""
    text = "import triton.language as tl\nif True: from .compat import kernel\n\n@kernel\ndef k" + BODY
    user = _package(tmp_path, text)
    index = WorkspaceIndex()
    assert _kernels(user, index) == ["k"]
    assert may_define_kernel(text, str(user), index)
    # the same word in a comment that names the decorator is not read either: parsed, to be safe
    (tmp_path / "b").mkdir()
    commented = CASES["re-exported decorator"] + "# import kernel from compat, not from triton\n"
    assert may_define_kernel(commented, str(_package(tmp_path / "b", commented)), WorkspaceIndex())
