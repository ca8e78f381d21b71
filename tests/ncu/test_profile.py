"""`tritonify profile`: the ncu argument list, error classification and the whole path with a fake ncu."""
import json
import os
import sys
import time
from pathlib import Path

import pytest

from tritonify.diagnostics.ncu.errors import ProfileError, classify
from tritonify.tools.ncu.profile_run import ProfileRequest, build_ncu_argv, run_profile
from tritonify.kernels.bench.launch import contract_launcher
from tritonify.cli.main import main

from .helpers import FIXTURES

FAKE = Path(__file__).parent / "fake_ncu.py"


H200 = {"available": True, "name": "NVIDIA H200", "driver": "580.159.04", "warnings": []}


@pytest.fixture
def fake_ncu(monkeypatch, tmp_path):
    """A fake ncu on a machine that reports an H200 through NVML."""
    monkeypatch.setenv("TRITONIFY_NCU", str(FAKE))
    monkeypatch.setattr("tritonify.tools.ncu.profile_run.gpu_info", lambda: dict(H200))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_no_gpu_is_reported_as_no_gpu_not_as_a_launcher_crash(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITONIFY_NCU", str(FAKE))
    monkeypatch.setenv("FAKE_NCU_MODE", "crash")   # the launcher fails, as it does without a GPU
    monkeypatch.setattr("tritonify.tools.ncu.profile_run.gpu_info",
                        lambda: {"available": False, "reason": "NVML could not start: Driver Not Loaded"})
    with pytest.raises(ProfileError) as exc:
        run_profile(request(tmp_path))
    assert exc.value.code == "no-gpu" and "Driver Not Loaded" in str(exc.value)


def test_throttled_clocks_become_warnings(fake_ncu, monkeypatch):
    from tritonify.tools.ncu.gpu_info import throttle_warnings

    assert throttle_warnings(0x1) == []  # idle is normal
    assert throttle_warnings(0x4 | 0x40) == ["clocks throttled: software power cap", "clocks throttled: hardware thermal slowdown"]
    monkeypatch.setattr("tritonify.tools.ncu.profile_run.gpu_info",
                        lambda: {**H200, "warnings": throttle_warnings(0x4)})
    result = run_profile(request(fake_ncu))
    assert "clocks throttled: software power cap" in result.warnings
    assert result.gpu["name"] == "NVIDIA H200"


def request(tmp_path, **kw):
    return ProfileRequest(file=str(FIXTURES / "planted_triton.py"), kernel="planted_c_uncoalesced",
                          command=[sys.executable, "-c", "pass"], output=str(tmp_path / "r.ncu-rep"), **kw)


def test_argv_targets_one_kernel_and_the_pattern_sections(tmp_path):
    argv = build_ncu_argv(request(tmp_path, nvtx_range="tritonify", launch_count=2, launch_skip=3), "ncu")
    assert argv[0] == "ncu"
    assert argv[argv.index("-k") + 1] == "regex:^planted_c_uncoalesced$"
    assert argv[argv.index("--launch-count") + 1] == "2" and argv[argv.index("--launch-skip") + 1] == "3"
    assert argv[argv.index("--nvtx-include") + 1] == "tritonify/" and "--nvtx" in argv
    assert argv[argv.index("--import-source") + 1] == "yes"
    assert argv[argv.index("--clock-control") + 1] == "none"
    assert argv[argv.index("--kill") + 1] == "yes"   # the command stops once its launch is profiled
    assert "--kill" not in build_ncu_argv(request(tmp_path, keep_running=True), "ncu")
    sections = [argv[i + 1] for i, a in enumerate(argv) if a == "--section"]
    assert sections == ["LaunchStats", "Occupancy", "SourceCounters"] and "--set" not in argv
    # what the dropped sections gave, asked for by name: every stall reason, the roofs, the roofline's counters
    metrics = argv[argv.index("--metrics") + 1].split(",")
    from tritonify.diagnostics.ncu.metrics import CPI, MEMORY_UNITS, STALL
    from tritonify.diagnostics.ncu.patterns.z_limiter import REASONS

    assert {CPI, *MEMORY_UNITS, *(STALL.format(r) for r in REASONS), "dram__bytes.sum.per_second"} <= set(metrics)
    assert len(metrics) == len(set(metrics))
    assert argv[-3:] == [sys.executable, "-c", "pass"]
    full = build_ncu_argv(request(tmp_path, full=True), "ncu")
    assert full[full.index("--set") + 1] == "full" and "--section" not in full


@pytest.mark.parametrize("command, expected", [
    ([sys.executable, "bench.py"], "application-only"),
    (["python3.11", "-m", "tritonify.kernels.bench.bench_child"], "application-only"),
    (["python", "-m", "torch.distributed.run", "--nproc-per-node", "2", "train.py"], "all"),
    (["torchrun", "train.py"], "all"),
    (["bash", "run.sh"], "all"),
    (["ipython", "x.py"], "all"),
    (["python", "-mtorch.distributed.run", "train.py"], "all"),
    (["python", "-u", "-m", "accelerate.commands.launch", "train.py"], "all"),
    (["python", "train.py", "-m", "accelerate"], "application-only"),   # the script's own arguments
    (["C:/envs/k/Python.exe", "bench.py"], "application-only"),
    (["/opt/venv/bin/python3.13t", "bench.py"], "application-only"),
    (["python", "-c", "import bench"], "application-only"),
])
def test_ncu_follows_child_processes_only_when_the_command_is_not_a_python_launcher(tmp_path, command, expected):
    req = ProfileRequest(file="k.py", kernel="k", command=command, output=str(tmp_path / "r"))
    argv = build_ncu_argv(req, "ncu")
    assert argv[argv.index("--target-processes") + 1] == expected
    req.processes = "all"
    assert build_ncu_argv(req, "ncu")[2] == "all"


def test_a_kernel_launched_by_a_child_process_is_profiled_on_a_second_run(fake_ncu, monkeypatch):
    log = fake_ncu / "argv.jsonl"
    monkeypatch.setenv("FAKE_NCU_MODE", "childonly")
    monkeypatch.setenv("FAKE_NCU_ARGV_LOG", str(log))
    result = run_profile(request(fake_ncu))
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r[r.index("--target-processes") + 1] for r in runs] == ["application-only", "all"]
    assert result.diagnoses and result.diagnoses[0].letters[0] == "C"
    assert any("not launched by the command's own process" in w for w in result.warnings)
    # asked for explicitly, there is no second run, and nothing profiled is an error
    log.unlink()
    with pytest.raises(ProfileError) as exc:
        run_profile(request(fake_ncu, processes="application-only"))
    assert exc.value.code == "no-kernel" and len(log.read_text().splitlines()) == 1


def test_nothing_profiled_twice_says_the_command_ran_twice(fake_ncu, monkeypatch):
    log = fake_ncu / "argv.jsonl"
    monkeypatch.setenv("FAKE_NCU_MODE", "nokernel")
    monkeypatch.setenv("FAKE_NCU_ARGV_LOG", str(log))
    with pytest.raises(ProfileError) as exc:
        run_profile(request(fake_ncu))
    assert exc.value.code == "no-kernel" and "ran twice" in exc.value.hint
    assert len(log.read_text().splitlines()) == 2


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


def _wait_for(path: Path, seconds: float = 20.0) -> int:
    end = time.time() + seconds
    while time.time() < end:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    pytest.fail(f"{path} was not written")


@pytest.mark.skipif(sys.platform != "linux", reason="process groups and /proc")
def test_an_error_while_ncu_runs_kills_its_process_group(fake_ncu, monkeypatch):
    from tritonify.tools.ncu.profile_run import _run_under_ncu

    pid_file = fake_ncu / "child.pid"
    monkeypatch.setenv("FAKE_NCU_MODE", "hang")
    monkeypatch.setenv("FAKE_NCU_CHILD_PID", str(pid_file))

    def broken():
        _wait_for(pid_file)
        raise RuntimeError("the reader could not start")

    with pytest.raises(RuntimeError):
        _run_under_ncu([sys.executable, str(FAKE), "-o", str(fake_ncu / "r")], time.time() + 60, None,
                       lambda *a: None, broken)
    child = int(pid_file.read_text())
    end = time.time() + 10
    while _alive(child) and time.time() < end:
        time.sleep(0.05)
    assert not _alive(child)


@pytest.mark.skipif(sys.platform != "linux", reason="process groups and /proc")
def test_sigterm_to_the_profile_command_stops_ncu_and_the_launcher(fake_ncu, monkeypatch):
    import signal
    import subprocess

    pid_file = fake_ncu / "child.pid"
    env = dict(os.environ, TRITONIFY_NCU=str(FAKE), FAKE_NCU_MODE="hang", FAKE_NCU_CHILD_PID=str(pid_file))
    cli = subprocess.Popen([sys.executable, "-m", "tritonify", "profile", f"{FIXTURES / 'planted_triton.py'}::k",
                            "-o", str(fake_ncu / "r"), "--", sys.executable, "-c", "pass"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child = _wait_for(pid_file)
    cli.send_signal(signal.SIGTERM)
    assert cli.wait(timeout=20) != 0
    end = time.time() + 10
    while _alive(child) and time.time() < end:
        time.sleep(0.05)
    assert not _alive(child)


@pytest.mark.skipif(sys.platform != "linux", reason="process groups and /proc")
def test_stopping_a_profile_job_at_server_shutdown_stops_ncu_too(fake_ncu):
    import subprocess

    from tritonify.infra.child_process import stop_jobs

    pid_file = fake_ncu / "child.pid"
    env = dict(os.environ, TRITONIFY_NCU=str(FAKE), FAKE_NCU_MODE="hang", FAKE_NCU_CHILD_PID=str(pid_file))
    job = subprocess.Popen([sys.executable, "-m", "tritonify", "profile", f"{FIXTURES / 'planted_triton.py'}::k",
                            "-o", str(fake_ncu / "r"), "--", sys.executable, "-c", "pass"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    child = _wait_for(pid_file)
    t0 = time.time()
    stop_jobs([job.pid])
    assert time.time() - t0 < 3
    job.wait(timeout=10)
    end = time.time() + 10
    while _alive(child) and time.time() < end:
        time.sleep(0.05)
    assert not _alive(child)


def test_messages_captured_on_the_h200_are_classified():
    msgs = json.loads((FIXTURES / "ncu_messages.json").read_text())
    nokernel = classify(msgs["no_kernel"]["rc"], msgs["no_kernel"]["stdout_tail"], kernel="k")
    assert nokernel.code == "no-kernel" and "'k'" in nokernel.message
    crash = msgs["crash"]
    err = classify(crash["rc"], crash["stdout_tail"] + crash["stderr_tail"])
    assert err.code == "launcher-crashed" and "code 3" in err.message
    assert "boom: planted crash" in err.stderr_tail


def test_classify_permission_and_no_gpu_and_success():
    err = classify(1, "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission")
    assert err.code == "counters-permission"
    assert "NVreg_RestrictProfilingToAdminUsers=0" in err.hint and "CAP_SYS_ADMIN" in err.hint
    assert classify(1, "cudaErrorNoDevice: no CUDA-capable device is detected").code == "no-gpu"
    ok = '==PROF== Profiling "k" - 0: 0%....50%....100% - 35 passes\n'
    assert classify(0, ok) is None


def test_ncu_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("TRITONIFY_NCU", str(tmp_path / "no-such-ncu"))
    with pytest.raises(ProfileError) as exc:
        run_profile(request(tmp_path))
    assert exc.value.code == "ncu-missing" and "Nsight Compute" in str(exc.value)


@pytest.mark.parametrize("mode,code", [("perm", "counters-permission"), ("nogpu", "no-gpu"),
                                       ("nokernel", "no-kernel"), ("crash", "launcher-crashed")])
def test_errors_from_ncu(fake_ncu, monkeypatch, mode, code):
    monkeypatch.setenv("FAKE_NCU_MODE", mode)
    with pytest.raises(ProfileError) as exc:
        run_profile(request(fake_ncu))
    assert exc.value.code == code
    if mode == "crash":
        assert "ValueError: shapes do not match" in exc.value.stderr_tail


def test_timeout_kills_the_whole_process_group(fake_ncu, monkeypatch):
    pid_file = fake_ncu / "child.pid"
    monkeypatch.setenv("FAKE_NCU_MODE", "hang")
    monkeypatch.setenv("FAKE_NCU_CHILD_PID", str(pid_file))
    start = time.time()
    with pytest.raises(ProfileError) as exc:
        run_profile(request(fake_ncu, timeout=2))
    assert exc.value.code == "timeout" and time.time() - start < 20
    child = int(pid_file.read_text())
    for _ in range(50):  # the grandchild must be gone too (reaped by init or a zombie)
        try:
            os.kill(child, 0)
            stat = Path(f"/proc/{child}/stat").read_text().split()[2] if Path(f"/proc/{child}/stat").exists() else "X"
            if stat == "Z":
                break
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the launcher's child survived the timeout")


def test_whole_path_with_fake_ncu(fake_ncu):
    events = []
    result = run_profile(request(fake_ncu), progress=lambda text, pct: events.append((text, pct)))
    assert Path(result.report).is_file() and result.report.endswith("r.ncu-rep")
    (d,) = result.diagnoses
    assert d.launch.kernel == "planted_c_uncoalesced" and d.letters[0] == "C"
    assert events[-1] == ("done", 100) and any("profiling planted_c_uncoalesced" in t for t, _ in events)
    side = json.loads(Path(result.report).with_suffix(".json").read_text())
    assert side["gpu"]["name"] == "NVIDIA H200" and side["ncu_argv"][0].endswith("fake_ncu.py")


def test_cli_profile_json(fake_ncu, capsys):
    code = main(["profile", f"{FIXTURES / 'planted_triton.py'}::planted_c_uncoalesced", "--format", "json",
                 "-o", str(fake_ncu / "x"), "--", sys.executable, "-c", "pass"])
    out, err = capsys.readouterr()
    assert code == 0  # a profile that names patterns succeeded
    doc = json.loads(out)
    assert doc["schema"] == "tritonify.profile/1" and doc["report"].endswith("x.ncu-rep")
    assert doc["summary"].split(", ")[1].startswith("C ")
    data = doc["launches"]
    assert data[0]["kernel"] == "planted_c_uncoalesced" and data[0]["report"].endswith("x.ncu-rep")
    assert data[0]["patterns"][0]["pattern"] == "C"
    progress = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert any("progress" in p and p["percent"] == 100 for p in progress)


def test_cli_profile_errors_are_json_objects(fake_ncu, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_NCU_MODE", "perm")
    code = main(["profile", "k.py::kern", "--format", "json", "--", sys.executable, "-c", "pass"])
    out, _ = capsys.readouterr()
    assert code == 2 and json.loads(out)["error"] == "counters-permission"
    code = main(["profile", "k.py:kern", "--format", "json"])
    out, _ = capsys.readouterr()
    assert code == 2 and json.loads(out)["error"] == "bad-target"


def test_cli_profile_without_launcher_says_how(fake_ncu, capsys):
    code = main(["profile", "k.py::kern"])
    _, err = capsys.readouterr()
    assert code == 2 and "-- python script.py" in err


def test_a_kernel_with_a_benchmark_contract_is_launched_through_it(fake_ncu):
    """No `-- COMMAND` (the editor's Profile code lens passes none): the contract's launcher runs
    the kernel, and only its measured call (inside the NVTX range `tritonify`) is profiled."""
    example = Path(__file__).resolve().parents[2] / "examples" / "bench" / "rmsnorm.py"
    req = ProfileRequest(file=str(example), kernel="rmsnorm_kernel", command=[], output=str(fake_ncu / "r.ncu-rep"))
    run_profile(req, launcher=contract_launcher)
    assert req.command[1:] == ["-m", "tritonify.kernels.bench.launch", f"{example}::rmsnorm_kernel"]
    assert req.nvtx_range == "tritonify"
    argv = build_ncu_argv(req, "ncu")
    assert argv[argv.index("--nvtx-include") + 1] == "tritonify/" and argv[-4:] == req.command[-4:]


def test_a_kernel_without_a_contract_still_needs_a_command(fake_ncu, tmp_path):
    lone = tmp_path / "lone.py"
    lone.write_text("import triton\n\n@triton.jit\ndef kern(x):\n    pass\n")
    with pytest.raises(ProfileError) as exc:
        run_profile(ProfileRequest(file=str(lone), kernel="kern", command=[]), launcher=contract_launcher)
    assert exc.value.code == "no-launcher" and "-- python script.py" in exc.value.hint


def test_report_paths_are_absolute(tmp_path, monkeypatch):
    """The editor reads the result from another folder than the job's: a relative path would not open."""
    monkeypatch.chdir(tmp_path)
    named = ProfileRequest(file="k.py", kernel="kern", command=[], output="out/x").report_path()
    assert named == tmp_path / "out" / "x.ncu-rep"
    default = ProfileRequest(file="k.py", kernel="kern", command=[], cwd="sub").report_path()
    assert default.is_absolute() and default.parent == tmp_path / "sub" / ".tritonify" / "profiles"


def test_every_metric_asked_for_by_name_exists_on_the_h200():
    """ncu skips a requested metric it does not know without failing: each name the triage
    collection asks for is in one of the H200 reports (triage capture, earlier sections, --set
    full), and the triage report itself holds all but the two K names added after it was taken
    (run 2 of results/ncu_turnaround_h200.md found none missing)."""
    import csv
    import gzip
    import io

    from tritonify.tools.ncu.profile_run import collection_metrics

    sets = FIXTURES / "sets"
    seen = set()
    for kind in ("triage", "own", "full"):
        seen |= set(next(csv.reader(io.StringIO(gzip.decompress((sets / kind / "raw.csv.gz").read_bytes()).decode()))))
    asked = collection_metrics()
    assert [m for m in asked if m not in seen] == []
    dump = json.loads(gzip.decompress((sets / "triage" / "dump.json.gz").read_bytes()))
    have = set(dump["actions"][0]["metrics"])
    assert {m for m in asked if m not in have} <= {"smsp__sass_inst_executed_op_local_ld.sum",
                                                   "smsp__sass_inst_executed_op_local_st.sum"}
    run2 = json.loads((Path(__file__).resolve().parents[2] / "results" / "ncu_turnaround_h200.json").read_text())["run_2"]
    assert run2["triage_missing_metrics"] == []
