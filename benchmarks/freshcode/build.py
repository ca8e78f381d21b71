"""Build the TritonBench-T programs the way the benchmark's call-accuracy check builds them.

    python benchmarks/freshcode/build.py TRITONBENCH_DIR OUT_DIR

TRITONBENCH_DIR is the unpacked ``tritonbench-t`` folder (``../shared/freshcode/tritonbench-t.tar.gz``,
unpacked outside the repository). Each prediction (``LLM_generated/*/*.jsonl``, field ``predict``) is
paired with the test of its operator's reference file (the part of ``data/TritonBench_T_v1/<op>.py``
after its line of 146 ``#``), as ``EVAL/eval_T/0_call_acc.py`` pairs them: the prediction, the ``#``
line, the test. The prediction keeps only its imports and definitions (functions, classes,
assignments); other top-level statements (the model's own demo calls, ``if __name__ ...`` blocks) are
blanked line for line, so a line of the program is the same line of the prediction. Programs whose
text is identical are built once; the manifest lists every (model file, operator) that produced each.

Writes OUT_DIR/programs/<id>.py and OUT_DIR/manifest.json. The programs are never committed.
"""

from __future__ import annotations

import ast
import hashlib
import json
import sys
from pathlib import Path

SEPARATOR = "#" * 146
KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
        ast.Assign, ast.AnnAssign)


def clear_code(code: str) -> str:
    """The benchmark's own clean-up of a model answer (the last fenced python block)."""
    if "```python" in code:
        code = code.split("```python")[-1].replace("<|im_end|>", "").replace("<|EOT|>", "")
    return code.split("```")[0] if "```" in code else code


def definitions_only(code: str) -> str | None:
    """The prediction with every top-level statement that is not an import or a definition blanked."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    lines = code.splitlines()
    for node in tree.body:
        if isinstance(node, KEPT):
            continue
        start = node.lineno - 1
        if getattr(node, "decorator_list", None):
            start = min(d.lineno for d in node.decorator_list) - 1
        for i in range(start, node.end_lineno):
            lines[i] = ""
    return "\n".join(lines) + "\n"


def operator_file(instruction: str, described: list[tuple[str, str]]) -> str | None:
    func = instruction.split("Functional Description: ")[-1].split("Wrapper Entry Information:")[0]
    func = func.replace("\n", "")
    hits = [f for desc, f in described if func and func in desc]
    return hits[0] if len(hits) == 1 else None


def build(root: Path, out: Path) -> dict:
    described = [(item["description"].replace("\n", ""), item["file"])
                 for item in json.loads((root / "data/TritonBench_T_v1.jsonl").read_text())]
    tests: dict[str, str] = {}
    programs: dict[str, dict] = {}
    skipped = {"no_operator": 0, "syntax_error": 0}
    (out / "programs").mkdir(parents=True, exist_ok=True)
    for jsonl in sorted(root.glob("LLM_generated/*/*.jsonl")):
        source = f"{jsonl.parent.name}/{jsonl.name}"
        for n, line in enumerate(jsonl.read_text(encoding="utf-8").splitlines()):
            item = json.loads(line)
            op = operator_file(next(iter(item.values())), described)
            if op is None:
                skipped["no_operator"] += 1
                continue
            if op not in tests:
                text = (root / "data/TritonBench_T_v1" / op).read_text(encoding="utf-8")
                tests[op] = text.split(SEPARATOR)[-1]
            body = definitions_only(clear_code(item["predict"]))
            if body is None:
                skipped["syntax_error"] += 1
                continue
            program = body + SEPARATOR + "\n" + tests[op]
            key = hashlib.sha1(program.encode()).hexdigest()[:12]
            entry = programs.setdefault(key, {"id": key, "operator": op,
                                              "prediction_lines": body.count("\n"), "sources": []})
            entry["sources"].append(f"{source}:{n}")
            path = out / "programs" / f"{key}.py"
            if not path.exists():
                path.write_text(program, encoding="utf-8")
    manifest = {"programs": sorted(programs.values(), key=lambda p: p["id"]), "skipped": skipped}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


if __name__ == "__main__":
    m = build(Path(sys.argv[1]), Path(sys.argv[2]))
    print(len(m["programs"]), "distinct programs;", m["skipped"])
