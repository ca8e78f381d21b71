"""Contract validation and discovery (by import in-process, and static for the language server)."""
from __future__ import annotations

import pytest
from tritonify.kernels.bench.contract import Contract, ContractError
from tritonify.kernels.bench.discovery import (
    candidate_files,
    load_contracts,
    select_contract,
    static_contracts,
    static_perf_reports,
)

from tests.bench.conftest import write_case


def _f(*args):
    return args


def test_contract_defaults_and_tolerances():
    c = Contract(entry=_f, inputs=_f, reference=_f, shapes=[(2, 3), 5], dtype="bfloat16")
    assert c.shapes == [(2, 3), (5,)]
    assert c.name == "_f"
    assert c.tolerances == (1e-2, 1.6e-2)
    c2 = Contract(entry=_f, inputs=_f, reference=_f, dtype="float32", atol=1e-3)
    assert c2.tolerances == (1e-3, 1e-4)


@pytest.mark.parametrize("kwargs, field", [
    ({"entry": 3}, "entry"),
    ({"dtype": "int8"}, "dtype"),
    ({"target": 80}, "target"),
    ({"baselines": {"eager": _f}}, "eager"),
])
def test_contract_rejects_bad_fields(kwargs, field):
    base = {"entry": _f, "inputs": _f, "reference": _f}
    with pytest.raises(ContractError, match=field):
        Contract(**{**base, **kwargs})


def test_matches_kernel_launcher_and_name():
    c = Contract(entry=_f, inputs=_f, reference=_f, kernel="k_kernel", name="nice")
    assert c.matches("k_kernel") and c.matches("_f") and c.matches("nice")
    assert not c.matches("other")


def test_sibling_contract_file_is_found_and_selected(tmp_path, interpret):
    kernel = write_case(tmp_path, "good")
    assert candidate_files(kernel) == [kernel, tmp_path / "affine_contract.py"]
    contracts = load_contracts(kernel)
    assert [c.kernel for c in contracts] == ["affine_kernel"]
    assert select_contract(contracts, "affine_kernel") is contracts[0]
    assert select_contract(contracts, "entry") is contracts[0]       # the launcher's name works too
    with pytest.raises(LookupError, match="no contract for 'nope'"):
        select_contract(contracts, "nope")


def test_contract_in_the_kernel_file_itself_and_bench_prefix(tmp_path):
    (tmp_path / "k.py").write_text(
        "import torch\nfrom tritonify.kernels.bench import Contract\n"
        "def run(x):\n    return x + 1\n"
        "CONTRACTS = [Contract(entry=run, inputs=lambda s, d, dev: (torch.randn(s),), reference=run, name='one'),\n"
        "             Contract(entry=run, inputs=lambda s, d, dev: (torch.randn(s),), reference=run, name='two')]\n")
    (tmp_path / "bench_k.py").write_text(
        "from k import run\nfrom tritonify.kernels.bench import Contract\n"
        "EXTRA = Contract(entry=run, inputs=lambda s, d, dev: (s,), reference=run, name='three')\n")
    names = [c.name for c in load_contracts(tmp_path / "k.py")]
    assert names == ["one", "two", "three"]
    with pytest.raises(LookupError, match="several contracts"):
        select_contract(load_contracts(tmp_path / "k.py"), None)
    assert [r.name for r in static_contracts(tmp_path / "k.py")] == ["one", "two", "three"]


def test_no_contract_is_a_clear_lookup_error(tmp_path):
    (tmp_path / "plain.py").write_text("x = 1\n")
    with pytest.raises(LookupError, match="no contract found"):
        select_contract(load_contracts(tmp_path / "plain.py"), None)
    assert static_contracts(tmp_path / "plain.py") == []


def test_static_discovery_never_imports(tmp_path):
    kernel = write_case(tmp_path, "good")
    (tmp_path / "affine_contract.py").write_text(
        (tmp_path / "affine_contract.py").read_text() + "\nraise SystemExit('imported!')\n")
    refs = static_contracts(kernel)
    assert [(r.name, r.file.endswith("affine_contract.py")) for r in refs] == [("affine_kernel", True)]


def test_static_perf_report_discovery(tmp_path):
    f = tmp_path / "tut.py"
    f.write_text("import triton\n@triton.testing.perf_report([])\ndef bench(N):\n    return N\n"
                 "def not_a_bench():\n    pass\n")
    assert [r.name for r in static_perf_reports(f)] == ["bench"]
    (tmp_path / "broken.py").write_text("def (:\n")
    assert static_perf_reports(tmp_path / "broken.py") == []
