"""Static rules for Triton and CUDA, ncu report parsing and the bottleneck patterns."""
