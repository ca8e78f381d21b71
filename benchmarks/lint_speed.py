"""Lint speed on real-world Triton code, against only parsing the same files with ast.parse.

Corpus: Liger-Kernel's ops (every file under liger_kernel/ops), PyTorch's Triton sparse ops and
this repository's examples, whatever of them is installed. Run:

    python benchmarks/lint_speed.py            # prints a Markdown table for the README
    python benchmarks/lint_speed.py --per-rule # also: median ms per rule (and parse, shared setup)

Targets (issue 2): lint time at most 2x parse time over the corpus; re-linting a 3,000-line
kernel file in at most 30 ms.
"""
from __future__ import annotations

import ast
import importlib.util
import platform
import statistics
import sys
import time
from pathlib import Path

from tritonify.diagnostics.engine import lint_text
from tritonify.diagnostics.registry import all_rules
from tritonify.diagnostics.settings import Settings

ROOT = Path(__file__).resolve().parent.parent


def corpus() -> list[Path]:
    files: list[Path] = []
    spec = importlib.util.find_spec("liger_kernel")
    if spec and spec.submodule_search_locations:
        files += sorted(Path(spec.submodule_search_locations[0], "ops").rglob("*.py"))
    spec = importlib.util.find_spec("torch")
    if spec and spec.submodule_search_locations:
        files += [p for p in [Path(spec.submodule_search_locations[0], "sparse", "_triton_ops.py")] if p.is_file()]
    files += sorted((ROOT / "examples").rglob("*.py"))
    return files


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def big_file(files: list[Path], lines: int = 3000) -> str:
    parts, n = [], 0
    for p in files:
        text = "\n".join(l for l in p.read_text(encoding="utf-8").splitlines() if not l.startswith("from __future__"))
        parts.append(text)
        n += text.count("\n") + 1
        if n >= lines:
            break
    text = "\n".join(parts)
    return "\n".join(text.splitlines()[:lines]) + "\n"


def per_rule_times(items: list[tuple[str, str]], settings: Settings, repeat: int) -> dict[str, float]:
    """Median seconds per stage over `repeat` runs: parse, the shared setup (module walk, kernel
    list), each rule's check, and embedded CUDA. A rule that first asks for a shared fact (a
    kernel's data flow) is charged for computing it; the rules after it get it free."""
    from tritonify.diagnostics.context import PythonContext
    from tritonify.diagnostics.engine import _embedded_cuda, _enabled_rules
    from tritonify.diagnostics.source import SourceFile

    runs: dict[str, list[float]] = {}
    for _ in range(repeat):
        spent: dict[str, float] = {}
        for text, path in items:
            t0 = time.perf_counter()
            source = SourceFile.from_text(text, path)
            spent["parse"] = spent.get("parse", 0.0) + time.perf_counter() - t0
            ctx = PythonContext(source, settings=settings)
            t0 = time.perf_counter()
            _ = ctx.kernels, ctx.parents  # the module walk and kernel list every rule shares
            spent["setup"] = spent.get("setup", 0.0) + time.perf_counter() - t0
            for reg in _enabled_rules(settings, path, "python"):
                ctx.rule = reg.rule
                t0 = time.perf_counter()
                list(reg.check(ctx))
                spent[reg.code] = spent.get(reg.code, 0.0) + time.perf_counter() - t0
            t0 = time.perf_counter()
            _embedded_cuda(source, settings)
            spent["cuda"] = spent.get("cuda", 0.0) + time.perf_counter() - t0
        for stage, seconds in spent.items():
            runs.setdefault(stage, []).append(seconds)
    return {stage: statistics.median(times) for stage, times in runs.items()}


def print_per_rule(corpus_items: list[tuple[str, str]], big: str, settings: Settings) -> None:
    on_corpus = per_rule_times(corpus_items, settings, 3)
    on_big = per_rule_times([(big, "big.py")], settings, 15)
    print()
    print("| stage | corpus (median of 3) | 3,000-line file (median of 15) |")
    print("| --- | --- | --- |")
    for stage in sorted(on_big, key=lambda s: -on_big[s]):
        print(f"| {stage} | {on_corpus.get(stage, 0.0) * 1e3:.1f} ms | {on_big[stage] * 1e3:.2f} ms |")


def main() -> int:
    files = corpus()
    texts = [p.read_text(encoding="utf-8") for p in files]
    settings = Settings()
    n_lines = sum(t.count("\n") for t in texts)
    parse_best, parse_med = best_of(lambda: [ast.parse(t) for t in texts], 7)
    lint_best, lint_med = best_of(lambda: [lint_text(t, str(p), settings) for t, p in zip(texts, files)], 7)
    kernels = sum(1 for _ in texts)  # files
    big = big_file(files)
    ast.parse(big)
    big_parse_best, big_parse_med = best_of(lambda: ast.parse(big), 15)
    big_best, big_med = best_of(lambda: lint_text(big, "big.py", settings), 15)
    findings = sum(len(lint_text(t, str(p), settings).findings) for t, p in zip(texts, files))
    print(f"Lint speed, {time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, {platform.machine()}, "
          f"{len(all_rules())} rules")
    print()
    print("| measurement | ast.parse only | tritonify lint | ratio | target |")
    print("| --- | --- | --- | --- | --- |")
    print(f"| corpus: {kernels} files, {n_lines:,} lines, {findings} findings (median of 7) | {parse_med * 1e3:.1f} ms | "
          f"{lint_med * 1e3:.1f} ms | {lint_med / parse_med:.2f}x | <= 2x |")
    print(f"| one {big.count(chr(10)):,}-line kernel file, re-lint (median of 15) | {big_parse_med * 1e3:.1f} ms | "
          f"{big_med * 1e3:.1f} ms | {big_med / big_parse_med:.2f}x | <= 30 ms |")
    if "--per-rule" in sys.argv[1:]:
        print_per_rule([(t, str(p)) for t, p in zip(texts, files)], big, settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
