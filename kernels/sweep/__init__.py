"""Benchmark sweeps spread over every GPU of a host, or over a Ray cluster, into one report and one lineage.

A sweep is the harness's job queue (``tritonify.kernels.bench.bench_jobs``: JSON specs, each run in its own
child process by ``run_job``). This package only decides *where* each job runs and *how* the results
are merged; measuring stays in the harness.

Modules, one job each:
  devices       GPU discovery and choice through nvidia-ml-py (busy GPUs skipped, models not mixed);
                a clean fallback when NVML is missing; ``Slot`` = one place a job may run
  pool          one host: one dispatcher per slot pulling from a shared queue, each job in a child
                pinned with ``CUDA_VISIBLE_DEVICES``; a lost worker's job is retried on another slot
  ray_backend   a Ray cluster (``--ray ADDRESS``): one task per job, pinned to one GPU, retried by Ray
                when its worker dies; imported only when asked for
  merge         the idempotency key per job, recording each key once in ``candidates.jsonl``, and the
                merged report of a sweep
  ratios        ratios between results, only where both were measured on the same GPU model
  cli           ``tritonify bench ... --gpus all|0,1 | --ray ADDRESS``
"""
