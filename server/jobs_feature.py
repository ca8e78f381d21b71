"""Long jobs: "Benchmark" and "Profile" a kernel through `workspace/executeCommand`.

The job runs `[interpreter, "-m", "tritonify", "bench"|"profile", "FILE::KERNEL", "--format",
"json"]` (a benchmark adds `--baselines`, `--shapes`, `--timeout` from the `benchmark.*` settings,
see `job_argv`) in a child process (`tritonify.infra.child_process`), with the user's interpreter (the one with
torch and triton; setting `interpreter`, default: the server's own). Never inside the server:
the server keeps answering while the job runs, and a job that crashes, runs out of memory or
hangs ends with a message while the server carries on.

Progress: the child's `{"progress": ..., "percent": N}` stderr lines become work-done progress
reports. Cancel: the client's `window/workDoneProgress/cancel` on the job's token (pygls 2.1
does not deliver `$/cancelRequest` to command handlers; it is honoured too when it arrives)
stops the child's whole process group. Nothing runs unless a command is executed, and nothing
runs in an untrusted workspace (setting `trusted`).
"""
from __future__ import annotations

import asyncio
import json
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types

from tritonify.contract import PROTOCOL
from tritonify.infra.child_process import JobResult, NOT_STARTED, OK, run_job, stop_jobs
from tritonify.server.app import COMMAND_PARAMS, TritonifyServer
from tritonify.server.documents import file_path
from tritonify.server.pygls_adapter import current_request_future
from tritonify.server.settings import EditorSettings

BENCHMARK, PROFILE = "benchmark", "profile"
SUBCOMMAND = {BENCHMARK: "bench", PROFILE: "profile"}
ENGINE = {BENCHMARK: "benchmark engine", PROFILE: "profile engine"}
PROGRESS_CREATE_TIMEOUT_S = 2.0
BENCH_GRACE_S = 30.0   # past bench's own --timeout, so it can stop its child and print its result


def job_argv(kind: str, settings: EditorSettings, path: Path, kernel: str, launch: list[str] | None = None,
             interpret: bool = False) -> list[str]:
    """The child's argument list (never a shell string): the sub-command, the target, JSON output,
    for a benchmark the baselines, shapes and timeout the user set (and `--interpret`: on the CPU,
    the "Run With the Interpreter" button of a machine without a GPU), for a profile the command
    that launches the kernel when the user gave one (after `--`)."""
    argv = [*settings.interpreter, "-m", "tritonify", SUBCOMMAND[kind], f"{path}::{kernel}", "--format", "json"]
    if kind == PROFILE and launch:
        return [*argv, "--", *launch]
    if kind == BENCHMARK and interpret:
        argv.append("--interpret")
    if kind == BENCHMARK:
        if settings.bench_baselines:
            argv += ["--baselines", ",".join(settings.bench_baselines)]
        if settings.bench_shapes:
            argv += ["--shapes", settings.bench_shapes]
        if settings.bench_timeout_s:
            argv += ["--timeout", f"{settings.bench_timeout_s:g}"]
    return argv


def job_timeout_s(kind: str, settings: EditorSettings) -> float:
    """`jobs.timeoutSeconds`, raised for a benchmark whose own `--timeout` is longer: bench then ends
    itself with a "timeout" result instead of being killed with nothing to show."""
    if kind == BENCHMARK and settings.bench_timeout_s:
        return max(settings.job_timeout_s, settings.bench_timeout_s + BENCH_GRACE_S)
    return settings.job_timeout_s


_PROTOCOL = PROTOCOL   # contract/protocol.json, shared with the client
JOB_ACTIONS: dict[str, str] = _PROTOCOL["jobActions"]
MISSING_MODULE = ("No module named 'torch'", "No module named 'triton'", "No module named torch", "No module named triton",
                  "torch is not installed", "triton is not installed")


def next_actions(kind: str, ok: bool, status: str, message: str, stderr: str = "", error: str = "",
                 no_gpu: bool = False) -> list[str]:
    """What a failed job offers next, as ids of JOB_ACTIONS (the client shows them as buttons):
    a run on the CPU with Triton's interpreter when no GPU is visible (a benchmark), the
    interpreter when torch, triton or tritonify is missing from it, the ncu path when ncu is, a
    contract when the benchmark has none, a launch command when nothing launches the kernel; and
    the log, always."""
    if ok:
        return []
    actions = []
    if kind == BENCHMARK and no_gpu:
        actions.append("runWithInterpreter")
    if status in (NOT_STARTED, "missing-engine") or any(m in stderr or m in message for m in MISSING_MODULE):
        actions.append("chooseInterpreter")
    if status == "ncu-missing":
        actions.append("setNcuPath")
    if kind == BENCHMARK and error == "no-contract":
        actions.append("writeContract")
    if kind == PROFILE and status == "no-launcher":
        actions.append("setLaunchCommand")
    actions.append("openLog")
    return actions


@dataclass
class Outcome:
    ok: bool
    message: str
    summary: str | None = None
    result: Any = None
    status: str = ""
    actions: list[str] = field(default_factory=list)   # next_actions
    advice: str = ""      # the end of `message` that says how to fix it by hand (a command line, a setting)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "status": self.status, "message": self.message, "summary": self.summary, "result": self.result,
                "actions": list(self.actions)}


def parse_result(stdout: str) -> dict | None:
    """The JSON object the child printed: the whole of stdout, or else its last JSON line."""
    text = stdout.strip()
    if not text:
        return None
    try:
        data = json.loads(text)
        return data if isinstance(data, dict) else None
    except ValueError:
        pass
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict):
                return data
    return None


NO_GPU_WITH_BUTTON = ("{kind} not run: no CUDA GPU is visible here; Run With the Interpreter checks the kernel's "
                      "correctness on the CPU (it times nothing)")
# The actions that do what an outcome's advice says (a client showing them as buttons drops the advice).
_ACTIONS_THAT_ADVISE = {"writeContract", "setLaunchCommand", "chooseInterpreter", "setNcuPath"}


def interpret(kind: str, job: JobResult, interpreter: str, buttons: bool = False) -> Outcome:
    """`read_outcome`, with the actions it offers next (next_actions). `buttons`: the client shows
    those actions as buttons; a message then ends at its reason when a button does what its advice
    says (no "run tritonify profile ... -- python script.py" next to a "Set Launch Command" button, no
    "set TRITONIFY_NCU" next to "Set ncu Path")."""
    outcome = read_outcome(kind, job, interpreter)
    error = outcome.result.get("error") if isinstance(outcome.result, dict) else None
    no_gpu = isinstance(outcome.result, dict) and outcome.result.get("no_gpu") is True
    outcome.actions = next_actions(kind, outcome.ok, outcome.status, outcome.message, job.stderr,
                                   error if isinstance(error, str) else "", no_gpu)
    if buttons and no_gpu and "runWithInterpreter" in outcome.actions:   # the button does what "add --interpret" said
        outcome.message = NO_GPU_WITH_BUTTON.format(kind=kind)
        outcome.advice = ""
    if buttons and outcome.advice and _ACTIONS_THAT_ADVISE & set(outcome.actions):
        outcome.message = outcome.message[: len(outcome.message) - len(outcome.advice)]
        outcome.advice = ""
    return outcome


def read_outcome(kind: str, job: JobResult, interpreter: str) -> Outcome:
    """Turn what the child did into an outcome with a message that says what is missing.
    Never invents a result: no JSON object on stdout means no result. A result that reached the
    kernel (measured shapes, profiled launches) is kept and shown even when its verdict is bad
    (incorrect, crashed at a shape); one that did not is a failure with the engine's own reason."""
    engine, sub = ENGINE[kind], SUBCOMMAND[kind]
    stderr = job.stderr
    if job.status == NOT_STARTED:
        advice = " (set tritonify.interpreter to the Python that has torch and triton)"
        return Outcome(False, f"{job.message}{advice}", status=job.status, advice=advice)
    data = parse_result(job.stdout)
    if job.status != OK and data is None:
        # No JSON at all: the engine could not answer (not installed in that interpreter, or one
        # without this sub-command); only then is the child's stderr read.
        if "invalid choice" in stderr and repr(sub) in stderr:
            return Outcome(False, f"{engine} not installed in {interpreter}: `tritonify {sub}` is not a sub-command there "
                                  "(install a Tritonify that has it into that interpreter)", status="missing-engine")
        if "No module named tritonify" in stderr or "No module named 'tritonify'" in stderr:
            advice = ", or set tritonify.interpreter to a Python that has it"
            return Outcome(False, f"{engine} not installed in {interpreter}: tritonify is not installed there; "
                                  f"pip install tritonify into it{advice}", status="missing-engine", advice=advice)
        return Outcome(False, job.message, status=job.status)
    if data is None:
        first = job.stdout.strip().splitlines()[0][:200] if job.stdout.strip() else "nothing"
        return Outcome(False, f"{engine} in {interpreter} gave no JSON result (stdout: {first}); "
                              f"is `tritonify {sub} --format json` the version this editor expects?", status="bad-output")
    status = str(data.get("status") or data.get("error") or job.status)
    reached = bool(data.get("shapes") or data.get("launches"))
    if not reached and (job.status != OK or status != OK):
        why = data.get("message") if isinstance(data.get("message"), str) and data.get("message") else job.message
        hint = data.get("hint") if isinstance(data.get("hint"), str) else ""
        advice = f" ({hint})" if hint else ""   # the fix by hand, e.g. "`tritonify bench ... --write-contract` writes one"
        if data.get("error") == "no-contract":   # a usage error, as data (contract/bench.schema.json)
            advice += "; in the editor, Ctrl+. inside the kernel offers \"Write a benchmark contract\""
        return Outcome(False, f"{kind} failed: {why}{advice}", result=data, status=status, advice=advice)
    summary = data.get("summary") if isinstance(data.get("summary"), str) else None
    ok = job.status == OK and status == OK
    if ok:
        message = f"{kind} finished: {summary}" if summary else f"{kind} finished (the result has no summary line)"
    else:
        message = f"{kind} finished, {status}: {summary or data.get('message') or job.message}"
    return Outcome(ok, message, summary, data, status=status)


class JobsFeature:
    def __init__(self, server: TritonifyServer):
        self.server = server
        self.running: dict[tuple[str, str, str], int | None] = {}   # (kind, uri, kernel) -> child pid
        self.full_results: dict[tuple[str, str, str], dict] = {}
        self.job_results: dict[tuple[str, str], dict[str, str]] = {}   # (uri, kernel) -> {kind: summary}, for the code lens
        self._stopping = False

    # ---- progress ------------------------------------------------------------------------
    async def _progress_token(self) -> types.ProgressToken | None:
        params = COMMAND_PARAMS.get()
        if params is not None and params.work_done_token is not None:
            return params.work_done_token
        caps = self.server.client_capabilities.window
        if not (caps and caps.work_done_progress):
            return None
        token = f"tritonify-{uuid.uuid4()}"
        try:
            await asyncio.wait_for(self.server.work_done_progress.create_async(token), PROGRESS_CREATE_TIMEOUT_S)
        except Exception as exc:
            self.server.log(types.MessageType.Warning, f"no progress shown: window/workDoneProgress/create failed: {exc!r}")
            return None
        return token

    def _cancel_probe(self, token):
        progress = self.server.work_done_progress
        request_future = current_request_future(self.server.protocol)

        def cancelled() -> bool:
            if self._stopping:
                return True
            future = progress.tokens.get(token) if token is not None else None
            if future is not None and future.cancelled():
                return True
            return request_future is not None and request_future.cancelled()

        return cancelled

    # ---- the job -------------------------------------------------------------------------
    async def run(self, kind: str, args: tuple) -> dict:
        server = self.server
        if len(args) < 2 or not isinstance(args[0], str) or not isinstance(args[1], str) or not args[1].isidentifier():
            return Outcome(False, f"tritonify.{kind} takes two arguments: the document URI and the kernel name",
                           status="bad-arguments").to_dict()
        uri, kernel = args[0], args[1]
        launch = args[2] if kind == PROFILE and len(args) > 2 else None
        options = args[2] if kind == BENCHMARK and len(args) > 2 and isinstance(args[2], dict) else {}
        interpret_on_cpu = options.get("interpret") is True
        if launch is not None and not (isinstance(launch, list) and launch and all(isinstance(a, str) and a for a in launch)):
            return Outcome(False, "tritonify.profile's third argument, the launch command, is a list of strings "
                                  "(e.g. [\"python\", \"bench.py\"])", status="bad-arguments").to_dict()
        settings = server.settings_for(uri)
        if not settings.trusted:
            return self._tell(Outcome(False, f"{kind} refused: this workspace is not trusted, and a {kind} runs its code "
                                             f"({server.trust_hint()})", status="untrusted"))
        path = file_path(uri)
        if path is None or not path.is_file():
            return self._tell(Outcome(False, f"{kind} needs a saved file on disk; {uri} is not one", status="no-file"))
        key = (kind, uri, kernel)
        if key in self.running:
            return self._tell(Outcome(False, f"a {kind} of {kernel} is already running", status="busy"))
        interpreter = settings.interpreter[0]
        argv = job_argv(kind, settings, path, kernel, launch, interpret=interpret_on_cpu)
        self.running[key] = None
        token = await self._progress_token()
        progress = server.work_done_progress
        if token is not None:
            progress.begin(token, types.WorkDoneProgressBegin(title=f"Tritonify {kind}: {kernel}", cancellable=True,
                                                              message=f"starting {interpreter}", percentage=0))

        def on_progress(message: str, percent: int | None) -> None:
            if token is not None:
                progress.report(token, types.WorkDoneProgressReport(message=message, percentage=percent))

        def on_started(pid: int) -> None:
            self.running[key] = pid

        env = dict(os.environ, PYTHONUNBUFFERED="1")
        try:
            job = await run_job(argv, what=f"{kind} of {kernel}", timeout_s=job_timeout_s(kind, settings), on_progress=on_progress,
                                cancelled=self._cancel_probe(token), cwd=str(path.parent), env=env, on_started=on_started)
        finally:
            self.running.pop(key, None)
        outcome = interpret(kind, job, interpreter, buttons=self._client_shows_outcomes())
        if token is not None:
            progress.end(token, types.WorkDoneProgressEnd(message=outcome.message))
            progress.tokens.pop(token, None)
        if outcome.result is not None and outcome.summary:   # a result about the kernel, good or bad
            self.full_results[key] = outcome.result
            if outcome.summary:
                self.job_results.setdefault((uri, kernel), {})[kind] = outcome.summary
                self.server.refresh_code_lenses()
        return self._tell(outcome)

    def _client_shows_outcomes(self) -> bool:
        """Whether the client said (initializationOptions.client) that it shows each outcome
        itself, with its next actions as buttons: then a message from here would be a second one."""
        return self.server.client_says(_PROTOCOL["clientShowsJobOutcomes"])

    def _tell(self, outcome: Outcome) -> dict:
        level = types.MessageType.Info if outcome.ok else types.MessageType.Warning
        if not self._client_shows_outcomes():
            try:
                self.server.window_show_message(types.ShowMessageParams(type=level, message=f"Tritonify: {outcome.message}"))
            except Exception:
                pass
        self.server.log(level, outcome.message)
        return outcome.to_dict()


    def stop_all(self) -> None:
        """At shutdown: stop every running job's process group (SIGTERM, then SIGKILL after a
        second: a profile job then stops ncu, which runs in a session of its own)."""
        self._stopping = True
        stop_jobs([pid for pid in list(self.running.values()) if pid])


def register(server: TritonifyServer) -> JobsFeature:
    feature = JobsFeature(server)
    server.add_feature(feature)
    server.on_shutdown.append(feature.stop_all)

    async def guarded_run(kind: str, args: tuple) -> dict:
        try:
            return await feature.run(kind, args)
        except Exception as exc:
            import traceback

            server.log(types.MessageType.Error, f"{kind} failed inside the server: {exc!r}\n{traceback.format_exc()}")
            return Outcome(False, f"{kind} failed inside the server: {type(exc).__name__}: {exc}", status="internal-error").to_dict()

    @server.command("tritonify.benchmark")
    async def benchmark(*args):
        return await guarded_run(BENCHMARK, args)

    @server.command("tritonify.profile")
    async def profile(*args):
        return await guarded_run(PROFILE, args)

    @server.command("tritonify.showResult")
    def show_result(*args):
        if len(args) >= 3 and all(isinstance(a, str) for a in args[:3]):
            uri, kernel, kind = args[:3]
            return feature.full_results.get((kind, uri, kernel))
        return None

    return feature
