"""contract/: the server's commands and code-action kinds, and the results it hands the extension,
checked against what the real producers emit (committed H200 results, and real runs on this CPU:
`tritonify bench` under the Triton interpreter, `tritonify profile` with the fake ncu)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from lsprotocol import types

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "contract"
COMMANDS = json.loads((CONTRACT / "commands.json").read_text(encoding="utf-8"))


def schema(name: str) -> dict:
    doc = json.loads((CONTRACT / name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(doc)
    return doc


def valid(instance, name: str) -> None:
    jsonschema.Draft202012Validator(schema(name)).validate(instance)


def test_the_server_handles_exactly_the_contracts_commands():
    from tritonify.server.app import create_server

    assert sorted(create_server().protocol.fm.commands) == sorted(COMMANDS["server"])


def test_the_code_action_kinds_are_the_contracts():
    from tritonify.server.code_actions import KINDS

    assert [str(getattr(k, "value", k)) for k in KINDS] == [COMMANDS["codeActionKinds"][name]
                                                            for name in COMMANDS["advertisedCodeActionKinds"]]
    assert COMMANDS["codeActionKinds"]["quickFix"] == types.CodeActionKind.QuickFix.value


def test_every_command_that_runs_workspace_code_says_so_to_an_untrusted_workspace():
    for name, spec in COMMANDS["server"].items():
        assert isinstance(spec["runsWorkspaceCode"], bool), name
        assert bool(spec.get("untrustedMessage")) == spec["runsWorkspaceCode"], name


def test_the_extensions_contributed_commands_are_in_the_contract():
    package = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    contributed = {c["command"] for c in package["contributes"]["commands"]}
    assert contributed <= set(COMMANDS["client"]), contributed - set(COMMANDS["client"])
    assert not set(COMMANDS["client"]) & set(COMMANDS["server"])


def test_committed_h200_results_follow_the_schemas():
    valid(json.loads((ROOT / "results" / "bench_rmsnorm_h200.json").read_text()), "bench.schema.json")
    jobs = json.loads((ROOT / "results" / "code_lens_jobs_h200.json").read_text())
    for kind, result_schema in (("benchmark", "bench.schema.json"), ("profile", "profile.schema.json")):
        valid(jobs[kind], "job_outcome.schema.json")
        valid(jobs[kind]["result"], result_schema)


def test_a_schema_rejects_what_the_renderer_could_not_read():
    with pytest.raises(jsonschema.ValidationError):
        valid({"schema": "tritonify.bench/1", "status": "ok", "message": "", "shapes": [{"label": "4096"}]},
              "bench.schema.json")          # a shape without results
    with pytest.raises(jsonschema.ValidationError):
        valid({"schema": "tritonify.profile/1", "status": "ok", "launches": [{"kernel": "k"}]}, "profile.schema.json")


def _cli(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run([sys.executable, "-m", "tritonify", *args], capture_output=True, text=True, timeout=240,
                          env={**os.environ, **(env or {})}, cwd=cwd)


@pytest.mark.slow
def test_a_real_cpu_benchmark_and_its_job_outcome_follow_the_schemas(tmp_path):
    from tests.bench.conftest import write_case
    from tritonify.infra.child_process import OK, JobResult
    from tritonify.server.jobs_feature import BENCHMARK, interpret

    kernel = write_case(tmp_path, "good")
    done = _cli("bench", f"{kernel}::affine_kernel", "--interpret", "--device", "cpu", "--timer", "none",
                "--baselines", "eager", "--format", "json", "--no-report", "--no-lineage", cwd=tmp_path)
    result = json.loads(done.stdout)
    assert result["shapes"], done.stderr[-2000:]
    valid(result, "bench.schema.json")
    outcome = interpret(BENCHMARK, JobResult(OK if done.returncode == 0 else "failed", "", done.returncode,
                                             done.stdout, []), sys.executable).to_dict()
    valid(outcome, "job_outcome.schema.json")


def test_a_bench_usage_error_follows_the_schema(tmp_path):
    lone = tmp_path / "lone.py"
    lone.write_text("import triton\n\n@triton.jit\ndef k(x):\n    pass\n")
    done = _cli("bench", f"{lone}::k", "--format", "json")
    assert done.returncode == 2
    doc = json.loads(done.stdout)
    valid(doc, "bench.schema.json")
    assert doc["status"] == "usage" and doc["error"] == "no-contract"


def test_a_real_profile_with_the_fake_ncu_follows_the_schema(tmp_path):
    """The real `tritonify profile` pipeline (ncu's CSV export parsed, patterns, lines, roofline);
    only ncu itself is the fake one the ncu tests use, and NVML answers as an H200."""
    fixtures = ROOT / "tests" / "ncu" / "fixtures"
    code = (
        "import sys\n"
        "import tritonify.tools.ncu.profile_run as pr\n"
        "pr.gpu_info = lambda: {'available': True, 'name': 'NVIDIA H200', 'driver': '580', 'warnings': []}\n"
        "from tritonify.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "profile", f"{fixtures / 'planted_triton.py'}::planted_c_uncoalesced",
         "--format", "json", "-o", str(tmp_path / "x"), "--", sys.executable, "-c", "pass"],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
        env={**__import__("os").environ, "TRITONIFY_NCU": str(ROOT / "tests" / "ncu" / "fake_ncu.py")})
    doc = json.loads(done.stdout)
    assert doc["launches"] and doc["launches"][0]["patterns"], done.stderr[-2000:]
    valid(doc, "profile.schema.json")
    missing = _cli("profile", "k.py::kern", "--format", "json", "--", sys.executable, "-c", "pass",
                   env={"TRITONIFY_NCU": str(tmp_path / "no-ncu")}, cwd=tmp_path)
    valid(json.loads(missing.stdout), "profile.schema.json")


@pytest.mark.slow
def test_a_real_inspect_follows_the_schema(tmp_path):
    """`tritonify inspect` compiles the fixture kernel for sm_90 with triton's own ptxas (no GPU)."""
    pytest.importorskip("triton")
    fixture = ROOT / "tests" / "compile" / "fixtures" / "kernels.py"
    done = _cli("inspect", f"{fixture}::row_softmax", "--target", "sm_90", "--format", "json", cwd=tmp_path,
                env={"TRITON_CACHE_DIR": str(tmp_path / "triton"), "TRITONIFY_CACHE_DIR": str(tmp_path / "tritonify"),
                     "TRITON_DEFAULT_FP_FUSION": "1"})
    doc = json.loads(done.stdout)
    assert len(doc["variants"]) == 2 and doc["findings"], done.stderr[-2000:]
    valid(doc, "inspect.schema.json")
    doc["variants"][0]["resources"]["registers"] = "48"
    with pytest.raises(jsonschema.ValidationError):
        valid(doc, "inspect.schema.json")
