"""A Ray cluster: each job of a sweep is one Ray task, pinned to one GPU, retried when its worker is lost.

Used when the user points at a cluster (``--ray ADDRESS``; ``auto`` for the cluster this machine
belongs to, ``ray://HOST:10001`` for a remote one, ``local`` to start a private one here). Ray is an
optional dependency, imported only here and only when asked for.

Each task asks Ray for ``num_gpus=1`` (Ray then sets ``CUDA_VISIBLE_DEVICES`` to the GPU it granted)
and runs the job with the harness's ``bench_jobs.run_job``: a child process, as on one host. The task
returns the result with its placement (host, Ray node, the pinning, the GPU model from NVML).

Lost workers: when a task's Ray worker dies, Ray runs the task again elsewhere (``max_retries``); when
the job's own child is killed from outside (``pool.is_lost``), the task raises ``LostWorker`` so that
Ray retries it the same way. Either way the coordinator receives one result per task and records it
under the job's idempotency key (``merge.Recorder``), so a job is never recorded twice.
"""
from __future__ import annotations

import os
import socket
from collections.abc import Callable

from tritonify.kernels.bench import bench_jobs
from tritonify.kernels.sweep.merge import Recorder, settle
from tritonify.kernels.sweep.pool import is_lost


class RayUnavailable(RuntimeError):
    """Ray is not installed or the cluster cannot be reached; the message says what to do."""


class LostWorker(RuntimeError):
    """The job's process was killed from outside: raised inside the task so that Ray retries it."""


def import_ray():
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--ray needs Ray: pip install 'ray>=2.9' on this machine and every node") from None
    return ray


def _gpu_model(gpu_ids: list) -> str | None:
    if not gpu_ids:
        return None
    from tritonify.kernels.sweep.devices import discover

    devices, _ = discover()
    by_index = {str(d.index): d.name for d in devices}
    return by_index.get(str(gpu_ids[0]))


def _run_task(spec: dict, python: str | None, timeout: float | None) -> dict:
    """Body of one Ray task (runs on a Ray worker): the job in a child process, and where it ran."""
    import ray

    gpu_ids = list(ray.get_gpu_ids())
    result = bench_jobs.run_job(spec, python=python, timeout=timeout)
    if is_lost(result):
        raise LostWorker(result.get("message", "the job's process was killed"))
    result["placement"] = {
        "slot": f"ray-node-{ray.get_runtime_context().get_node_id()[:8]}", "host": socket.gethostname(),
        "backend": "ray", "worker_pid": os.getpid(), "gpu_index": gpu_ids[0] if gpu_ids else None,
        "gpu_model": _gpu_model(gpu_ids), "gpu_uuid": None,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }
    return result


def _failed(spec: dict, exc: BaseException, retries: int) -> dict:
    first = (str(exc).strip().splitlines() or [""])[-1]
    return {"status": "crashed", "job": spec.get("id"), "target": spec.get("target"), "shapes": [],
            "message": f"Ray could not run the job (after up to {retries} retries): {type(exc).__name__}: {first}",
            "summary": f"CRASHED: Ray task failed ({type(exc).__name__})"}


def run_ray(specs: list[dict], address: str | None, *, sweep_id: str, recorder: Recorder | None = None,
            gpus_per_task: float = 1, cpus_per_task: float = 1, max_retries: int = 2,
            timeout: float | None = None, python: str | None = None,
            on_result: Callable[[dict], None] | None = None) -> list[dict]:
    """Run every spec as a Ray task; returns the results in the order of ``specs``.

    Connects to ``address`` unless Ray is already initialised in this process (tests start a local
    cluster themselves); ``address="local"`` starts a private cluster here.
    """
    ray = import_ray()
    if not ray.is_initialized():
        try:
            ray.init(address=None if address in (None, "local") else address, include_dashboard=False,
                     log_to_driver=False)
        except Exception as exc:  # ConnectionError and friends: a message, never a traceback
            raise RayUnavailable(f"cannot reach the Ray cluster at {address!r}: {type(exc).__name__}: {exc}") from None
    if gpus_per_task and not ray.cluster_resources().get("GPU"):
        raise RayUnavailable(f"the Ray cluster at {address!r} has no GPU, so no task asking for one would ever "
                             "start; add GPU nodes, or run CPU-only jobs with gpus_per_task=0")
    task = ray.remote(_run_task).options(num_gpus=gpus_per_task, num_cpus=cpus_per_task, max_retries=max_retries,
                                        retry_exceptions=[LostWorker])
    pending = {task.remote(spec, python, timeout): (index, spec) for index, spec in enumerate(specs)}
    results: list[dict | None] = [None] * len(specs)
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            index, spec = pending.pop(ref)
            try:
                result = ray.get(ref)
            except Exception as exc:  # the task failed on every attempt: WorkerCrashedError, LostWorker, ...
                result = _failed(spec, exc, max_retries)
            results[index] = settle(result, spec, sweep_id=sweep_id, recorder=recorder, on_result=on_result)
    return [r for r in results if r is not None]
