"""Rules for CUDA C/C++ (CUD...)."""
