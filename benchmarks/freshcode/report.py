"""What the checker says about the TritonBench-T programs whose fate the GPU decided.

    python benchmarks/freshcode/report.py BUILT_DIR [--ground-truth results/freshcode/ground_truth_h200.json]
                                          [--select ALL] [--out results/freshcode/report_default]

For each program Triton's compiler rejected: does Tritonify give an error-severity finding that names
the cause (a rule of the cause's class, below) on the failing line (``right_line``), elsewhere inside
the failing ``@triton.jit`` function or a jit function it calls (``in_kernel``); or only an error of
another cause inside the kernel (``other_cause``); or nothing (``missed``). For each program that
compiled and ran to the end (``passed``): any error-severity finding is a false alarm. Both per cause
class. The linter is told the Triton version the programs ran under (the ground truth's header), as
it would read it from the user's environment.

Writes OUT.md and OUT.json.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
import time
from pathlib import Path

# (class, what the compiler said, the rules whose finding names that cause). First match wins.
CAUSES: list[tuple[str, str, tuple[str, ...]]] = [
    ("block_on_scalar_pointer", r"(Mask|Value|Other) argument cannot be block type", ("TRI025",)),
    ("python_operator_on_tensor",
     r"__pow__|unsupported tensor index|__setitem__|simultaneous multiple comparison|Boolean value of Tensor"
     r"|has no len\(\)|cannot be interpreted as an integer|float\(\) argument", ("TRI027",)),
    ("access_through_non_pointer",
     r"Unsupported ptr type|Expected `base` to be a pointer|cannot cast pointer|invalid operands of type pointer",
     ("TRI024",)),
    ("arange", r"arange|Shape element \d+ must have type `constexpr", ("TRI004", "TRI019")),
    ("dot_operands", r"equal ranks|reduction dimensions|K >= 16|operands must", ("TRI028", "TRI021", "TRI064", "TRI005")),
    ("non_jit_call", r"Did you forget to add @triton.jit|'function' object has no attribute 'fn'", ("TRI031", "TRI027", "TRI026")),
    ("unsupported_construct",
     r"unsupported AST node|Cannot have `return`|Cannot access global|is not defined|only tuple comprehensions",
     ("TRI020",)),
    ("unknown_api",
     r"has no attribute|unexpected keyword argument|required positional argument|multiple values for argument"
     r"|object is not callable|program_id axis|create_reduce\(\): incompatible|'constexpr_type' object has no "
     r"attribute 'scalar'", ("TRI026",)),
    ("type_changes_in_branch_or_loop",
     r"Loop-carried variable|Mismatched type|redefines it|inconsistent types", ("TRI030",)),
    ("shape_mismatch", r"make_shape_compatible|Expected pointer argument to have shape|permute dims",
     ("TRI021", "TRI064")),
    ("python_sequence_in_kernel", r"AssertionError with no message|list index out of range|is not in list",
     ("TRI027",)),
    ("loop_bounds", r"For lower bound|For upper bound|range\.__init__", ("TRI029",)),
    ("block_pointer", r"shape/strides/offsets|padding_option", ()),
    ("reduction_of_a_scalar", r"invalid axis -?\d+\. Expected 0 <= axis < 0", ("TRI026",)),
]


def rule_precision(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Per rule, judged by running the programs: TP = rejected programs where the rule gives an error
    finding naming the compiler's cause (its class lists the rule), FP = programs that compiled and ran
    where the rule gives an error finding; one count per program. A rule's finding in a rejected
    program of another cause is not judged (the compiler stops at its first error)."""
    codes_of = {name: codes for name, _, codes in CAUSES}
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        codes = {f[0] for f in row["errors"]}
        for code in codes:
            if row["outcome"] == "passed":
                out.setdefault(code, {"TP": 0, "FP": 0})["FP"] += 1
            elif code in codes_of.get(row.get("cause"), ()):
                out.setdefault(code, {"TP": 0, "FP": 0})["TP"] += 1
    return dict(sorted(out.items()))


def cause_of(message: str) -> tuple[str, tuple[str, ...]]:
    for name, pattern, codes in CAUSES:
        if re.search(pattern, message):
            return name, codes
    return "other", ()


def _jit_functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
                "jit" in ast.unparse(d) for d in node.decorator_list):
            found[node.name] = node
    return found


def kernel_lines(program: str, function: str | None, span: list[int] | None) -> set[int]:
    """Lines of the failing function and of the jit functions it calls (transitively)."""
    if not span:
        return set()
    tree = ast.parse(program)
    jits = _jit_functions(tree)
    lines = set(range(span[0], span[1] + 1))
    todo = [function]
    seen = set()
    while todo:
        name = todo.pop()
        if name in seen or name not in jits:
            continue
        seen.add(name)
        node = jits[name]
        lines.update(range(node.lineno, node.end_lineno + 1))
        for call in ast.walk(node):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
                todo.append(call.func.id)
    return lines


def launched_functions(program: str) -> set[str]:
    """The jit functions the program launches (`k[grid](...)` somewhere) and those they call."""
    tree = ast.parse(program)
    jits = _jit_functions(tree)
    todo = [n.func.value.id for n in ast.walk(tree) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Subscript) and isinstance(n.func.value, ast.Name)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name not in jits:
            continue
        seen.add(name)
        todo.extend(c.func.id for c in ast.walk(jits[name]) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name))
    return seen


def _function_at(program: str, line: int) -> str | None:
    for node in ast.walk(ast.parse(program)):
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= node.end_lineno:
            return node.name
    return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("built")
    parser.add_argument("--ground-truth", default="results/freshcode/ground_truth_h200.json")
    parser.add_argument("--select", default="")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    truth = json.load(open(args.ground_truth))
    os.environ["TRITONIFY_TRITON_VERSION"] = truth["run"]["environment"]["triton"]
    from tritonify.diagnostics.engine import lint_text
    from tritonify.diagnostics.model import Severity
    from tritonify.diagnostics.settings import Settings

    settings = Settings(select=tuple(c for c in args.select.split(",") if c))
    per_class: dict[str, dict] = {}
    rows = []
    alarms: dict[str, int] = {}
    started = time.perf_counter()
    for entry in truth["programs"]:
        if entry["outcome"] not in ("compile_error", "passed"):
            continue
        path = Path(args.built) / "programs" / f"{entry['id']}.py"
        program = path.read_text(encoding="utf-8")
        result = lint_text(program, str(path), settings)
        errors = [f for f in result.findings if f.severity == Severity.ERROR]
        if entry["outcome"] == "passed":
            bucket = per_class.setdefault("(compiled and ran)", {"programs": 0, "false_alarm": 0,
                                                                  "false_alarm_in_launched_kernel": 0})
            bucket["programs"] += 1
            launched = launched_functions(program)
            in_launched = [f for f in errors if _function_at(program, f.line) in launched]
            if errors:
                bucket["false_alarm"] += 1
                for f in errors:
                    alarms[f.code] = alarms.get(f.code, 0) + 1
            if in_launched:
                bucket["false_alarm_in_launched_kernel"] += 1
            rows.append({"id": entry["id"], "outcome": "passed",
                         "errors": [[f.code, f.line, f.message[:160]] for f in errors],
                         "errors_in_launched_kernels": len(in_launched)})
            continue
        error = entry["error"]
        cause, codes = cause_of(error["message"])
        inside = kernel_lines(program, error["function"], error["function_span"])
        failing = {error["line"], error.get("call_site_line")} - {None}
        naming = [f for f in errors if f.code in codes]
        if any(f.line in failing for f in naming):
            verdict = "right_line"
        elif any(f.line in inside for f in naming):
            verdict = "in_kernel"
        elif any(f.line in inside for f in errors):
            verdict = "other_cause"
        else:
            verdict = "missed"
        bucket = per_class.setdefault(cause, {"programs": 0, "right_line": 0, "in_kernel": 0,
                                              "other_cause": 0, "missed": 0, "rules": list(codes)})
        bucket["programs"] += 1
        bucket[verdict] += 1
        rows.append({"id": entry["id"], "outcome": "compile_error", "cause": cause, "verdict": verdict,
                     "line": error["line"], "message": error["message"][:160],
                     "errors": [[f.code, f.line, f.message[:160]] for f in errors]})
    elapsed = time.perf_counter() - started
    rejected = [r for r in rows if r["outcome"] == "compile_error"]
    caught = sum(r["verdict"] in ("right_line", "in_kernel") for r in rejected)
    passed = per_class.get("(compiled and ran)", {"programs": 0, "false_alarm": 0})
    summary = {
        "select": args.select or "(default set)",
        "triton_version_assumed": os.environ["TRITONIFY_TRITON_VERSION"],
        "rejected": len(rejected), "caught_naming_cause": caught,
        "caught_on_right_line": sum(r["verdict"] == "right_line" for r in rejected),
        "caught_rate": round(caught / max(1, len(rejected)), 4),
        "ran": passed["programs"], "ran_with_error_finding": passed["false_alarm"],
        "false_alarm_rate": round(passed["false_alarm"] / max(1, passed["programs"]), 4),
        "ran_with_error_in_a_launched_kernel": passed.get("false_alarm_in_launched_kernel", 0),
        "false_alarm_codes": alarms, "lint_seconds": round(elapsed, 1),
        "rule_precision": rule_precision(rows),
    }
    out = args.out or ("results/freshcode/report_" + ("all" if args.select else "default"))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out + ".json").write_text(json.dumps({"summary": summary, "per_class": per_class,
                                               "programs": rows}, indent=0) + "\n")
    run = truth["run"]
    md = [f"# Tritonify on freshly written Triton programs (TritonBench-T), {args.select or 'default set'}",
          "",
          f"Ground truth: {run['programs_run']} programs run on {run['environment']['gpu']} with Triton "
          f"{run['environment']['triton']}, torch {run['environment']['torch']} "
          f"(`{args.ground_truth}`, built and run by `benchmarks/freshcode/`). Written by "
          "`benchmarks/freshcode/report.py`.",
          "",
          f"- Rejected by Triton's compiler: {summary['rejected']}; an error finding naming the cause inside "
          f"the failing kernel: **{caught} ({100 * summary['caught_rate']:.1f}%)**, on the failing line: "
          f"{summary['caught_on_right_line']}.",
          f"- Compiled and ran: {summary['ran']}; with any error finding: **{summary['ran_with_error_finding']} "
          f"({100 * summary['false_alarm_rate']:.1f}%)** {alarms or ''}; in a kernel the program has a launch of "
          f"(`k[grid](...)`, maybe on a path the test does not take): {summary['ran_with_error_in_a_launched_kernel']}. "
          "A finding in a kernel the run never compiled is neither confirmed nor refuted by it.",
          "",
          "| cause class | rules | rejected | right line | elsewhere in kernel | other cause only | missed |",
          "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for cause, b in sorted(per_class.items(), key=lambda kv: -kv[1]["programs"]):
        if cause.startswith("("):
            continue
        md.append(f"| {cause} | {', '.join(b['rules']) or '-'} | {b['programs']} | {b['right_line']} | "
                  f"{b['in_kernel']} | {b['other_cause']} | {b['missed']} |")
    Path(out + ".md").write_text("\n".join(md) + "\n")
    print("\n".join(md[4:]))


if __name__ == "__main__":
    main()
