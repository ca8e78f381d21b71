"""The VS Code extension's entry point: `<python> bundled/tool/tritonify_server.py server ...`.

Run as a script, Python puts this file's folder first on `sys.path`, never the working directory
(`-m` and `-c` put the working directory there): no `pickle.py`, `pygls.py` or `tritonify/` of the
workspace can stand in for the real ones, with any Python 3.10+ (`-P` needs 3.11). The folder holds
this file only, and the extension starts it with this folder as the working directory.

`--check` is the extension's preflight: is this Python new enough, and does it import the server
(from the bundle, `bundled/libs` on PYTHONPATH, or from the interpreter's own environment)? It
exits 0 and prints where Tritonify was found, or exits 1 with the reason on its last line of stderr.
"""
import sys


def check():
    if sys.version_info < (3, 10):
        sys.exit("Python " + sys.version.split()[0] + " is too old: Tritonify needs 3.10 or newer")
    import tritonify.server.app  # noqa: F401  (what the server imports first)
    import tritonify

    print(tritonify.__file__)
    return 0


def main(argv):
    if argv[:1] == ["--check"]:
        return check()
    from tritonify.cli.main import main as tritonify_main

    return tritonify_main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
