"""Lint rules, one module per rule (found by `tritonify.diagnostics.registry`)."""
