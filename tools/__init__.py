"""The tools that start processes or run the user's code, apart from the pure analysis.

`tritonify.diagnostics` reads text and reports (rules, ncu pages, compile results) and never starts
a process; the modules here do: `compile/` compiles a kernel of the user's file in a child,
`ncu/` runs Nsight Compute (a profile, `ncu --import` of a report, its Python report reader).
Every process they start goes through `tritonify.infra.child_process` (tests/test_import_graph.py).
"""
