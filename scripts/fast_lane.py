"""The fast test lane: the tests of what you changed, plus the contract and import-graph tests.

    python scripts/fast_lane.py                # changes in the working tree (against HEAD)
    python scripts/fast_lane.py --base main    # and the commits since `main`
    python scripts/fast_lane.py PATH ...       # these files or folders, as if changed
    python scripts/fast_lane.py --print        # the pytest command only

It deselects the `slow`, `e2e` and `gpu` markers, so it runs in a few minutes on a 2-core machine
(CONTRIBUTING.md, "Tests": when to use which lane). The whole suite, `bash scripts/test.sh`, is what
CI runs and what a change must pass before it lands.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Always run: the layering, the server <-> extension contract, discovery and the pages.
ALWAYS = ["tests/test_import_graph.py", "tests/contract", "tests/test_discovery.py", "tests/test_references.py",
          "tests/test_one_timer.py"]

# (path prefix, the tests it maps to); the first prefix that matches wins.
MAP: list[tuple[str, list[str]]] = [
    ("diagnostics/rules/", ["tests/rules", "tests/test_default_rule_set.py", "tests/test_rule_table.py"]),
    ("diagnostics/liger/", ["tests/rules/test_tri003.py", "tests/rules/test_tri003_normal_forms.py",
                            "tests/rules/test_liger_scope.py", "tests/test_liger_api.py", "tests/test_liger_recall.py"]),
    ("diagnostics/ncu/", ["tests/ncu"]),
    ("diagnostics/compile/", ["tests/compile"]),
    ("tools/ncu/", ["tests/ncu"]),
    ("tools/compile/", ["tests/compile"]),
    ("diagnostics/cuda/", ["tests/rules/test_cud001.py", "tests/rules/test_cud002.py", "tests/test_cuda_embedded.py"]),
    ("diagnostics/workspace_index.py", ["tests/test_workspace_index.py", "tests/rules"]),
    ("diagnostics/incremental.py", ["tests/test_incremental.py", "tests/server"]),
    ("diagnostics/", ["tests/rules", "tests/test_lint_linear.py", "tests/test_lint_robustness.py",
                      "tests/test_lint_garbage.py", "tests/test_kernel_screen.py", "tests/test_target.py"]),
    ("server/", ["tests/server"]),
    ("cli/", ["tests/cli"]),
    ("infra/child_process.py", ["tests/server/test_child_process.py", "tests/server/test_run_process.py",
                                "tests/server/test_job_outcomes.py", "tests/server/test_lsp_jobs.py",
                                "tests/bench/test_runner.py", "tests/compile/test_stop_workers.py",
                                "tests/ncu/test_profile.py", "tests/ncu/test_report_reader.py"]),
    ("infra/", ["tests/server", "tests/bench/test_runner.py", "tests/compile/test_stop_workers.py"]),
    ("kernels/templates/", ["tests/templates"]),
    ("kernels/bench/", ["tests/bench"]),
    ("kernels/sweep/", ["tests/sweep"]),
    ("kernels/", ["tests/templates", "tests/bench"]),
    ("contract/", ["tests/contract", "tests/server"]),
    ("references/", ["tests/test_references.py", "tests/ncu/test_pattern_pages.py", "tests/ncu/test_pages.py"]),
    ("benchmarks/realworld/", ["tests/test_precision_study.py", "tests/test_corpus_reach.py"]),
    ("benchmarks/realkernels/", ["tests/ncu/test_realkernels.py", "tests/test_realkernels_harness.py"]),
    ("README.md", ["tests/test_readme.py"]),
    ("examples/", ["tests/test_readme.py", "tests/rules"]),
    ("scripts/fast_lane.py", ["tests/test_fast_lane.py"]),
    ("scripts/", ["tests/test_readme.py"]),
    ("gpu/", ["tests/test_one_timer.py"]),
]
MARKERS = "not slow and not e2e and not gpu"


def changed_files(base: str | None) -> list[str]:
    def git(*args: str) -> list[str]:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False).stdout
        return [line.strip() for line in out.splitlines() if line.strip()]

    files = git("diff", "--name-only", "HEAD") + git("ls-files", "--others", "--exclude-standard")
    if base:
        files += git("diff", "--name-only", f"{base}...HEAD")
    return sorted(set(files))


def _rule_module(path: str) -> str | None:
    """`tri014` for diagnostics/rules/triton/tri014_....py (a rule's own module); None for the
    shared helpers (`_shapes.py`), which map to every rule test."""
    p = Path(path)
    if p.parts[:2] == ("diagnostics", "rules") and p.suffix == ".py" and p.name[:3] in ("tri", "cud"):
        return p.name[:6]
    return None


def tests_for(paths: list[str]) -> tuple[list[str], bool]:
    """The test paths for `paths`, and whether the extension's TypeScript changed."""
    chosen: list[str] = list(ALWAYS)
    typescript = False
    for path in paths:
        if path.startswith("tests/") and path.endswith(".py") and Path(path).name.startswith("test_"):
            chosen.append(path)
            continue
        if path.startswith("tests/"):
            chosen.append(str(Path(path).parent) if (ROOT / path).is_file() else path)
            continue
        if path.startswith("extension/") or path == "package.json":
            typescript = True
            continue
        rule = _rule_module(path)
        if rule:
            chosen += [str(t.relative_to(ROOT)) for t in sorted((ROOT / "tests" / "rules").glob(f"test_{rule}*.py"))]
            chosen += ["tests/test_default_rule_set.py", "tests/test_rule_table.py"]
            continue
        for prefix, tests in MAP:
            if path.startswith(prefix):
                chosen += tests
                break
    existing = [t for t in dict.fromkeys(chosen) if (ROOT / t).exists()]
    # a folder already chosen covers the files below it
    folders = [t for t in existing if (ROOT / t).is_dir()]
    kept = [t for t in existing if not any(t != f and t.startswith(f.rstrip("/") + "/") for f in folders)]
    return kept, typescript


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="files or folders to treat as changed")
    parser.add_argument("--base", help="also the commits since this ref (e.g. main)")
    parser.add_argument("--print", action="store_true", help="print the pytest command and exit")
    args = parser.parse_args(argv)
    paths = args.paths or changed_files(args.base)
    tests, typescript = tests_for(paths)
    command = [sys.executable, "-m", "pytest", "-q", "-m", MARKERS, *tests]
    if args.print:
        print(" ".join(command))
        return 0
    print(f"fast lane: {len(paths)} changed path(s) -> {len(tests)} test path(s)", flush=True)
    code = subprocess.run(command, cwd=ROOT, check=False).returncode
    if typescript:
        print("fast lane: the extension changed -> npm test", flush=True)
        code = code or subprocess.run(["npm", "test", "--silent"], cwd=ROOT, check=False).returncode
    return 0 if code == 5 else code  # 5: no test selected (only docs changed)


if __name__ == "__main__":
    raise SystemExit(main())
