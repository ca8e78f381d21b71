"""Static rules for Triton and CUDA, ncu report parsing and the 14 bottleneck patterns."""
