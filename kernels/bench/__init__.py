"""The benchmark harness: "is this kernel correct, and how fast is it against what it replaces?"

A *contract* (``Contract``) written beside a kernel says what the kernel computes and how to call
it. The harness checks the output against the reference first (fresh random inputs, poisoned output
buffers, higher precision), then times the kernel and its baselines (PyTorch eager, ``torch.compile``,
Liger-Kernel, any callable) with ``triton.testing.do_bench`` or CUDA-graph replay, and reports the
throughput as a fraction of the GPU's measured copy bandwidth and bf16 matmul rate.

User code always runs in a child process (``bench_jobs.run_job``); the parent only reads JSON.

Modules, one job each:
  contract      the ``Contract`` type users write
  discovery     find contracts (by import, in the child) and contract/perf_report names (statically)
  inputs        seeding, upcasting, rotating input sets, the never-zeros check
  correctness   compare with the reference; output poisoning
  timing        GPU timer (do_bench / CUDA graph), the labelled wall-clock timer, the noise check
  ceilings      copy bandwidth and bf16 matmul rate, measured once per machine and cached
  environment   GPU name/driver/clocks/temperature (nvidia-ml-py), versions, git state
  baselines     eager / compile / liger / custom callables
  runner        one bench job, in process (what the child runs)
  bench_child   ``python -m tritonify.kernels.bench.bench_child``: the child's entry point
  bench_jobs    job specs and result files, one job run in a child (``tritonify.infra.child_process``)
  lineage       ``candidates.jsonl``: append-only history, promote/reject
  report        table (pandas), HTML, PNG chart, text, the one-line summary
  perf_report   run existing ``triton.testing.perf_report`` benchmarks as they are
  scaffold      write a contract for a kernel from its signature (static)
"""
from __future__ import annotations

from tritonify.kernels.bench.contract import Contract, ContractError

__all__ = ["Contract", "ContractError"]
