"""Liger-Kernel knowledge the linter needs, kept static so linting never imports liger.

* `api` holds the names and signatures of liger-kernel 0.8.5 that the rules suggest
  (verified against the installed package by `tests/test_liger_api.py`).
* `symbolic` turns a Triton kernel body into a small expression graph.
* `recognise` finds the ops Liger ships (RMSNorm, cross-entropy, RoPE, ...) in that graph.
"""
