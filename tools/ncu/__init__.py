"""Nsight Compute, the process half: run it, and read what it wrote.

* `profile_run.run_profile(ProfileRequest(...))` runs a launcher under ncu and diagnoses it;
* `inputs.load(paths)` diagnoses existing reports: CSV pages as they are, a `.ncu-rep` through
  `ncu --import` (`ncu_tool.export_pages`) or ncu's Python report reader (`report_reader`, a child
  under ncu's own interpreter path);
* `gpu_info.gpu_info()` names the GPU, driver and clock state (NVML) for the report.

Every process starts through `tritonify.infra.child_process`; the parsing and the patterns are the
pure `tritonify.diagnostics.ncu`.
"""
