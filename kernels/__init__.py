"""Kernel templates and the benchmark harness."""
