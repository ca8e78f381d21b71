"""Shared infrastructure (`tritonify.infra`): what every part of Tritonify uses and that knows
nothing of kernels, rules or editors. It imports no other `tritonify` package
(tests/test_import_graph.py keeps it so).

  version        the one version string
  exit_codes     the exit statuses of the command line and of the child processes
  child_process  start, watch, stop and classify a child process (one process-group killer)
  nvml           one NVML session (nvidia-ml-py), for every caller that reads the GPU
"""
