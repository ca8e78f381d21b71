"""TRI026/TRI052 judge API names against the Triton the project runs (diagnostics/triton_api/target.py):
an error where every admitted version lacks the name, a porting warning (TRI052, opt-in) where only some do."""
import textwrap
from pathlib import Path

import pytest

from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.model import Severity
from tritonify.diagnostics.settings import Settings, SettingsError, from_table
from tritonify.diagnostics.triton_api import target as target_mod
from tritonify.diagnostics.triton_api import versions

BLOCK_POINTERS = """
import triton
import triton.language as tl


@triton.jit
def copy_tiles(x_ptr, y_ptr, M, N, BLOCK: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (BLOCK, BLOCK), (1, 0))
    tile = tl.load(src, boundary_check=(0, 1))
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.tanh(tl.sum(tile, axis=0)))


def launch(x, y):
    copy_tiles[(1,)](x, y, 64, 64, BLOCK=64)
"""


@pytest.fixture(autouse=True)
def _no_forced_version(monkeypatch):
    monkeypatch.delenv("TRITONIFY_TRITON_VERSION", raising=False)
    target_mod._from_folder.cache_clear()


def _project(tmp_path: Path, declarations: dict[str, str]) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    for name, text in declarations.items():
        (root / name).write_text(textwrap.dedent(text))
    path = root / "pkg" / "tiles.py"
    path.write_text(BLOCK_POINTERS)
    return path


def _findings(path: Path, settings: Settings | None = None) -> dict[str, list]:
    settings = settings or Settings(select=("TRI026", "TRI052"))
    out: dict[str, list] = {"TRI026": [], "TRI052": []}
    for f in lint_text(path.read_text(), str(path), settings, on_disk=True).findings:
        if f.code in out:
            out[f.code].append(f)
    return out


def test_a_project_on_a_triton_with_block_pointers_gets_no_error_for_them(tmp_path):
    got = _findings(_project(tmp_path, {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["triton>=3.4,<3.9"]\n'}))
    # tl.tanh is missing everywhere: the error stays; boundary_check exists on 3.4..3.8
    assert [f.message.split(":")[0] for f in got["TRI026"]] == ["`tl` has no `tanh` in Triton 3.4.0 to 3.8.0 (what `triton>=3.4,<3.9` in proj/ admits)"]
    assert got["TRI052"] == []


def test_an_open_upper_bound_makes_the_removal_a_porting_warning(tmp_path):
    got = _findings(_project(tmp_path, {"setup.py": 'from setuptools import setup\nsetup(install_requires=["triton>=3.6.0"])\n'}))
    assert len(got["TRI026"]) == 1 and "tanh" in got["TRI026"][0].message
    (warn,) = got["TRI052"]
    assert warn.severity is Severity.WARNING
    assert "no keyword `boundary_check`" in warn.message and "3.9.0" in warn.message and "3.6.0 to 3.8.0" in warn.message
    assert "`triton>=3.6.0`" in warn.message


def test_a_version_past_the_removal_makes_it_an_error(tmp_path):
    got = _findings(_project(tmp_path, {"requirements.txt": "numpy\ntriton==3.9.0\n"}))
    assert any("boundary_check" in f.message for f in got["TRI026"]) and got["TRI052"] == []


def test_a_torch_pin_counts_through_the_triton_it_pins(tmp_path):
    versions_, source = target_mod.target(str(_project(tmp_path, {"requirements.txt": "torch==2.11.0\n"})))
    assert versions_ == ("3.6.0",) and "torch==2.11.0" in source


def test_the_setting_and_the_environment_override_the_project(tmp_path, monkeypatch):
    path = _project(tmp_path, {"requirements.txt": "triton==3.9.0\n"})
    got = _findings(path, Settings(select=("TRI026", "TRI052"), triton_version="3.6"))
    assert not any("boundary_check" in f.message for f in got["TRI026"] + got["TRI052"])
    monkeypatch.setenv("TRITONIFY_TRITON_VERSION", "3.6.0")
    assert target_mod.target(str(path)) == (("3.6.0",), "TRITONIFY_TRITON_VERSION=3.6.0")


def test_nothing_declared_admits_every_recorded_version(tmp_path):
    path = tmp_path / "loose.py"
    path.write_text(BLOCK_POINTERS)
    assert target_mod.target(str(path))[0] == tuple(versions())
    got = _findings(path)
    assert len(got["TRI026"]) == 1 and len(got["TRI052"]) == 1
    # TRI052 is opt-in: the default set reports only the error
    assert [f.code for f in lint_text(BLOCK_POINTERS, str(path), Settings(), on_disk=True).findings
            if f.code in ("TRI026", "TRI052")] == ["TRI026"]


def test_a_folder_above_the_project_is_not_read(tmp_path):
    (tmp_path / "requirements.txt").write_text("triton==3.9.0\n")
    path = _project(tmp_path, {"pyproject.toml": '[project]\nname = "p"\n'})
    assert target_mod.target(str(path))[0] == tuple(versions())


@pytest.mark.parametrize("spec,expected", [
    (">=3.4,<3.9", ["3.4.0", "3.5.1", "3.6.0", "3.7.1", "3.8.0"]),
    ("==3.6.0", ["3.6.0"]), ("3.6", ["3.6.0"]), (">=3.6.1", ["3.6.0", "3.7.1", "3.8.0", "3.9.0"]),
    ("<3.3", ["3.2.0"]),
])
def test_specifiers(spec, expected):
    assert target_mod.admitted(spec, versions()) == expected


def test_the_setting_is_checked():
    assert from_table({"triton-version": ">=3.4,<3.9"}).triton_version == ">=3.4,<3.9"
    with pytest.raises(SettingsError, match="triton-version"):
        from_table({"triton-version": 3.6})
    with pytest.raises(SettingsError, match="names no Triton version"):
        from_table({"triton-version": "<3.0"})


def test_a_venv_inside_the_project_names_the_version(tmp_path):
    path = _project(tmp_path, {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["numpy"]\n'})
    (path.parents[1] / ".venv" / "lib" / "python3.12" / "site-packages" / "triton-3.9.0.dist-info").mkdir(parents=True)
    versions_, source = target_mod.target(str(path))
    assert versions_ == ("3.9.0",) and "installed in proj/" in source
    got = _findings(path)
    assert any("boundary_check" in f.message for f in got["TRI026"]) and got["TRI052"] == []


def test_setup_cfg_requirements_are_read(tmp_path):
    path = _project(tmp_path, {"setup.cfg": "[options]\ninstall_requires =\n    triton>=3.2,<3.9\n"})
    assert target_mod.target(str(path))[0] == ("3.2.0", "3.3.1", "3.4.0", "3.5.1", "3.6.0", "3.7.1", "3.8.0")


def test_a_file_whose_folder_is_made_later_reads_that_project(tmp_path):
    # target() keeps the folder it found for each file path (diagnostics/triton_api/target.py,
    # `_folder_of`), but never a failure: a file asked about before its folder exists is read
    # again once the folder and its declarations are there
    root = tmp_path / "later"
    path = root / "pkg" / "tiles.py"
    assert target_mod.target(str(path))[0] == tuple(versions())
    (root / "pkg").mkdir(parents=True)
    (root / "requirements.txt").write_text("torch==2.11.0\n")
    path.write_text(BLOCK_POINTERS)
    versions_, source = target_mod.target(str(path))
    assert versions_ == ("3.6.0",) and "torch==2.11.0" in source
    assert target_mod.target(str(path)) == (versions_, source)   # the kept folder gives the same answer
