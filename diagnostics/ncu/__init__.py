"""Nsight Compute: parse its CSV pages, name the bottleneck patterns, pin them on source lines.

Entry points:
* `diagnose.diagnose_pages(raw, details, sources)` -> list of `Diagnosis` (one per launch);
* `findings.line_findings(diagnoses)` -> `tritonify.diagnostics.model.Finding`s on the kernel's
  lines (code = pattern letter), what the language server publishes;
* `render.to_json` / `render.to_text` print diagnoses as the CLI does.

Modules: `values` (cells, units), `raw_page`, `details_page`, `source_page` (the CSV pages),
`lines` (per-line attribution), `patterns/` (one detector per letter), `ncu_rules` (ncu's own
rules mapped to letters), `code_actions`, `errors` (what ncu's output says went wrong), `paths`.

Nothing here starts ncu: running a launcher under ncu (`profile_run.run_profile`), exporting or
reading a `.ncu-rep` (`ncu_tool`, `report_reader`, `inputs`) and asking the GPU (`gpu_info`) are
`tritonify.tools.ncu`.
"""
