"""Rules for Triton kernels (TRI...)."""
