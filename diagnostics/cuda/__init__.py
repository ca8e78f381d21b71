"""CUDA C/C++ analysis: a real parser (tree-sitter-cuda), positions mapped back to the file the
user edits (a `.cu` file, or the Python file that embeds the CUDA source in a string), a small
numeric-type inference for device code, and the entry points the engine calls (`embedded`)."""
