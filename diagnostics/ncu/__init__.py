"""Nsight Compute: parse its CSV pages, name the bottleneck patterns, pin them on source lines.

Entry points:
* `diagnose.diagnose_pages(raw, details, sources)` -> list of `Diagnosis` (one per launch);
* `findings.line_findings(diagnoses)` -> `tritonify.diagnostics.model.Finding`s on the kernel's
  lines (code = pattern letter), what the language server publishes;
* `profile_run.run_profile(ProfileRequest(...))` runs a launcher under ncu and diagnoses it;
* `render.to_json` / `render.to_text` print diagnoses as the CLI does.

Modules: `values` (cells, units), `raw_page`, `details_page`, `source_page` (the CSV pages),
`lines` (per-line attribution), `patterns/` (one detector per letter), `ncu_rules` (ncu's own
rules mapped to letters), `code_actions`, `errors`, `gpu_info`, `ncu_tool`, `inputs`, `paths`.
"""
