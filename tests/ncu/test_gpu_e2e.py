"""The whole path on a real GPU: kernel -> ncu -> report -> patterns -> editor findings.

Skipped without CUDA and ncu; run on the H200 machine (results/ncu_h200_e2e.json records a run).
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tritonify.tools.ncu.ncu_tool import find_ncu

ROOT = Path(__file__).resolve().parents[2]
GPU = ROOT / "gpu" / "ncu"


def _cuda_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(find_ncu() is None or not _cuda_available(), reason="needs a CUDA GPU and ncu")]


def _plants(kernel: str) -> dict:
    sys.path.insert(0, str(GPU))
    from run_cases import manifest

    return next(m for m in manifest() if m["kernel"] == kernel)


def _profile(kernel: str, tmp_path: Path) -> tuple[list[dict], str]:
    argv = [sys.executable, "-m", "tritonify", "profile", f"{GPU / 'planted_triton.py'}::{kernel}",
            "--nvtx-range", "tritonify", "--format", "json", "-o", str(tmp_path / kernel), "--timeout", "300",
            "--", sys.executable, str(GPU / "run_cases.py"), "--only", kernel]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=360)
    assert p.returncode == 0, (p.returncode, p.stdout[-2000:], p.stderr[-3000:])
    doc = json.loads(p.stdout)
    assert doc["schema"] == "tritonify.profile/1" and doc["summary"]
    return doc["launches"], p.stderr


@pytest.mark.parametrize("kernel,letter", [("planted_c_uncoalesced", "C"), ("planted_l_fp64", "L"),
                                           ("planted_m_no_pipelining", "M"), ("planted_o_hmma_small_dot", "O")])
def test_profile_names_the_planted_pattern_on_its_line(kernel, letter, tmp_path):
    data, stderr = _profile(kernel, tmp_path)
    (launch,) = data
    assert launch["kernel"] == kernel
    assert Path(launch["report"]).is_file()  # kept for Nsight Compute's GUI
    assert launch["gpu"].get("name", "").startswith("NVIDIA")
    assert launch["patterns"][0]["pattern"] == letter
    assert launch["not_assessed"] == []  # the default (triage) collection holds every pattern's metrics
    plant = _plants(kernel)
    expected = set(plant["plants"][letter]) | {plant["def_line"]}
    findings = [f for f in launch["findings"] if f["code"] == letter]
    assert findings and findings[0]["line"] in expected
    assert findings[0]["path"].endswith("gpu/ncu/planted_triton.py")
    assert any(json.loads(line).get("percent") == 100 for line in stderr.splitlines() if line.startswith('{"progress"'))
    if letter == "L":  # the code action casts back to fp32
        edits = [e for fx in findings[0]["fixes"] for e in fx["edits"]]
        assert any("tl.float32" in e["content"] for e in edits)
    out = ROOT / "results" / "ncu_h200_e2e.json"
    record = json.loads(out.read_text()) if out.exists() else {}
    record.setdefault("kernels", {})[kernel] = {"patterns": [p["pattern"] for p in launch["patterns"]],
                      "finding_lines": [f["line"] for f in launch["findings"]], "gpu": launch["gpu"]}
    out.write_text(json.dumps(record, indent=1))


def test_line_findings_function_for_the_server(tmp_path):
    """What the language server calls on the JSON-free path: Diagnosis -> Finding."""
    from tritonify.diagnostics.ncu.findings import line_findings
    from tritonify.tools.ncu.profile_run import ProfileRequest, run_profile

    kernel = "planted_c_uncoalesced"
    req = ProfileRequest(file=str(GPU / "planted_triton.py"), kernel=kernel, nvtx_range="tritonify",
                         command=[sys.executable, str(GPU / "run_cases.py"), "--only", kernel],
                         output=str(tmp_path / "r"))
    result = run_profile(req)
    findings = line_findings(result.diagnoses)
    c = [f for f in findings if f.code == "C"]
    assert c and c[0].line in _plants(kernel)["plants"]["C"]
    assert c[0].severity.value == "warning" and c[0].url and c[0].url.endswith("patterns/C.md")
