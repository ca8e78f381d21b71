"""Read an `.ncu-rep` in-process through Nsight Compute's Python interface (`ncu_report`).

Why: each `ncu --import R --csv --page ...` process loads the whole report again (0.5-1.1 s on
the H200 per page); `ncu_report` loads it once (6 ms) and reads every metric of a launch in
~0.1 s. The CSV exports stay as the fallback (no `ncu_report` for this Python, an older ncu) and
for CSV inputs.

Two steps, so that the second can be tested without Nsight Compute:
1. `dump_report(path)`: plain data out of `ncu_report` (the only code that touches it): per
   launch its name, metrics `{name: [unit, value]}`, the per-instruction values of the source
   counters `{name: {"pcs": [...], "values": [...]}}`, ncu's rule results, and for every PC its
   file, line and SASS text, plus the text of the source files the report holds;
2. `parse_dump(dump)`: the same `Launch`, `NcuRule` and `SourcePage` objects the CSV parsers
   make, so the detectors and the line attribution see one model whichever way the report came.

The source page's columns come from these instanced metrics (one value per PC, ncu 2025.3.1):
"Instructions Executed" = `inst_executed`, "Thread Instructions Executed" = `thread_inst_executed`,
"L2 Theoretical Sectors Global" = `memory_l2_theoretical_sectors_global` (excessive = minus its
`_ideal`), "L1 Wavefronts Shared" = `memory_l1_wavefronts_shared` (excessive = minus its `_ideal`),
"Divergent Branches" = `smsp__branch_targets_threads_divergent`, `stall_<reason>` =
`smsp__pcsamp_warps_issue_stalled_<reason>`, and "Warp Stall Sampling (All Samples)" = their sum.
"""
from __future__ import annotations

import glob
import importlib
import json
import os
import sys
import time
from pathlib import Path

from tritonify.infra.child_process import TIMEOUT, PipedChild
from tritonify.infra.safe_start import module_command
from tritonify.diagnostics.ncu.details_page import NcuRule
from tritonify.diagnostics.ncu.lines import (DIVERGENT, EXCESSIVE, INST, SAMPLES, SECTORS, SHARED_EXCESSIVE,
                                             SHARED_WAVEFRONTS, THREAD_INST)
from tritonify.diagnostics.ncu.raw_page import Launch
from tritonify.diagnostics.ncu.source_page import SassInstruction, SourceLine, SourcePage
from tritonify.diagnostics.ncu.values import to_base

SAMPLED = "smsp__pcsamp_warps_issue_stalled_"
# smsp__pcsamp_warps_issue_stalled_<reason> -> the source page's `stall_<short>` column
STALL_COLUMN = {"barrier": "barrier", "branch_resolving": "branch_resolving", "dispatch_stall": "dispatch",
                "drain": "drain", "imc_miss": "imc", "lg_throttle": "lg", "long_scoreboard": "long_sb",
                "math_pipe_throttle": "math", "membar": "membar", "mio_throttle": "mio", "misc": "misc",
                "no_instructions": "no_inst", "not_selected": "not_selected", "selected": "selected",
                "short_scoreboard": "short_sb", "sleeping": "sleep", "tex_throttle": "tex", "wait": "wait",
                "warpgroup_arrive": "warpgroup_arrive", "gmma": "gmma"}
PER_PC = {"inst_executed": INST, "thread_inst_executed": THREAD_INST,
          "memory_l2_theoretical_sectors_global": SECTORS,
          "memory_l1_wavefronts_shared": SHARED_WAVEFRONTS,
          "smsp__branch_targets_threads_divergent": DIVERGENT}
IDEAL = {"memory_l2_theoretical_sectors_global": ("memory_l2_theoretical_sectors_global_ideal", EXCESSIVE),
         "memory_l1_wavefronts_shared": ("memory_l1_wavefronts_shared_ideal", SHARED_EXCESSIVE)}
STRINGS = ("memory_type", "memory_access_type", "memory_access_size_type")


def wanted_per_pc(name: str) -> bool:
    """The instanced metrics the source model is made from (read per PC; the rest only as totals)."""
    return (name in PER_PC or name in STRINGS or any(name == ideal for ideal, _ in IDEAL.values())
            or (name.startswith(SAMPLED) and not name.endswith("_not_issued")))


class ReaderUnavailable(RuntimeError):
    """`ncu_report` cannot be used here; the caller exports CSV pages instead."""


def python_dirs(ncu: str | None) -> list[str]:
    """Where Nsight Compute keeps `ncu_report`: `<install>/extras/python` beside the real `ncu`."""
    dirs = []
    if ncu:
        real = Path(os.path.realpath(ncu)).parent
        for base in (real, real.parent):
            dirs += glob.glob(str(base / "extras" / "python")) + glob.glob(str(base / "nsight-compute*" / "extras" / "python"))
    dirs += sorted(glob.glob("/opt/nvidia/nsight-compute/*/extras/python"), reverse=True)
    dirs += sorted(glob.glob("/usr/local/cuda*/nsight-compute*/extras/python"), reverse=True)
    return [d for i, d in enumerate(dirs) if d not in dirs[:i] and Path(d, "ncu_report.py").is_file()]


def load_module(ncu: str | None):
    """The `ncu_report` module (imported on first use), or ReaderUnavailable saying why not."""
    if "ncu_report" in sys.modules:
        return sys.modules["ncu_report"]
    for d in python_dirs(ncu) or [None]:
        if d and d not in sys.path:
            sys.path.append(d)
        try:
            return importlib.import_module("ncu_report")
        except Exception as exc:  # a SWIG module built for another Python raises ImportError or worse
            last = exc
            if d in sys.path:
                sys.path.remove(d)
    raise ReaderUnavailable(f"Nsight Compute's Python interface (ncu_report) could not be imported: {last}")


def _value(metric):
    try:
        v = metric.value()
    except Exception:
        return None
    if isinstance(v, bool):
        return int(v)
    return v if isinstance(v, (int, float, str)) else None


def _is_string(metric) -> bool:
    try:
        return metric.kind() == metric.ValueKind_STRING
    except Exception:
        return False


def _instances(metric) -> dict | None:
    n = metric.num_instances()
    if not n or not metric.has_correlation_ids():
        return None
    ids = metric.correlation_ids()
    pcs = [ids.as_uint64(i) for i in range(n)]
    read = metric.as_string if _is_string(metric) else metric.as_double
    values = []
    for i in range(n):
        try:
            values.append(read(i))
        except Exception:
            values.append(None)
    return {"pcs": pcs, "values": values}


def _rules(action) -> list[dict]:
    try:
        found = action.rule_results_as_dicts()
    except Exception:
        return []
    out = []
    for r in found or []:
        msg = r.get("rule_message") or {}
        est = r.get("speedup_estimation") or {}
        out.append({"rule": r.get("rule_identifier") or r.get("name") or "", "section": r.get("section_identifier") or "",
                    "title": msg.get("title", ""), "message": msg.get("message", ""), "type": msg.get("type"),
                    "speedup_type": est.get("type"), "speedup": est.get("speedup")})
    return out


def _name(action) -> str:
    for base in ("NameBase_DEMANGLED", "NameBase_FUNCTION"):
        try:
            return action.name(getattr(action, base))
        except Exception:
            continue
    return action.name()


def dump_report(path: str, kernels: list[str] | None = None, *, ncu: str | None = None,
                per_pc=wanted_per_pc, module=None) -> dict:
    """Plain data out of the report (see the module docstring); `kernels` limits the launches read."""
    t0 = time.time()
    mod = module or load_module(ncu)
    timings = {"import_s": time.time() - t0}
    t0 = time.time()
    try:
        ctx = mod.load_report(str(path))
    except Exception as exc:
        raise ReaderUnavailable(f"ncu_report could not load {path}: {exc}") from None
    timings["load_s"] = time.time() - t0
    t0 = time.time()
    actions = []
    number = 0
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            launch_id, number = str(number), number + 1
            name = _name(action)
            if kernels and name not in kernels and action.name() not in kernels:
                continue
            metrics, instanced = {}, {}
            t1 = time.time()
            for metric_name in action.metric_names():
                m = action.metric_by_name(metric_name)
                # values are in the metric's base unit (the H200 check: every metric of 31 launches
                # equal to the `--print-units base` raw page), so no unit() call per metric
                metrics[metric_name] = ["", _value(m)]
                if per_pc(metric_name):
                    inst = _instances(m)
                    if inst:
                        instanced[metric_name] = inst
            t2 = time.time()
            pcs = sorted({pc for v in instanced.values() for pc in v["pcs"]})
            where = {}
            for pc in pcs:
                try:
                    info = action.source_info(pc)
                    file, line = (info.file_name(), info.line()) if info is not None else ("", 0)
                except Exception:
                    file, line = "", 0
                try:
                    sass = action.sass_by_pc(pc)
                except Exception:
                    sass = ""
                where[str(pc)] = [file, line, sass]
            t3 = time.time()
            files = {}
            try:
                for f, text in dict(action.source_files()).items():
                    if any(w[0] == f for w in where.values()):
                        files[f] = text
            except Exception:
                pass
            t4 = time.time()
            rules = _rules(action)
            t5 = time.time()
            # where the read's time goes, call kind by call kind (summed over launches)
            for key, dt in (("metrics_s", t2 - t1), ("sass_and_lines_s", t3 - t2), ("files_s", t4 - t3),
                            ("rules_s", t5 - t4)):
                timings[key] = timings.get(key, 0.0) + dt
            actions.append({"id": launch_id, "kernel": name, "metrics": metrics, "instanced": instanced,
                            "rules": rules, "pcs": where, "files": files})
    timings["read_s"] = time.time() - t0
    return {"report": str(path), "actions": actions, "timings": {k: round(v, 4) for k, v in timings.items()}}


# --- plain data -> the model the detectors read -----------------------------------------------------

RULE_TYPES = {1: "INF", 2: "OPT", 3: "WRN", 4: "ERR"}   # NvRules message types (0: no message, skipped)
SPEEDUP_TYPES = {1: "local", 2: "global"}
_STORES = ("ST", "STG", "STL", "STS", "STSM")
_LOCAL = ("LDL", "STL")


def _dims(metrics: dict, stem: str, total: str) -> tuple[int, ...]:
    dims = [metrics.get(f"{stem}_{axis}", [None, None])[1] for axis in "xyz"]
    if all(isinstance(d, (int, float)) for d in dims):
        return tuple(int(d) for d in dims)
    t = metrics.get(total, [None, None])[1]
    return (int(t),) if isinstance(t, (int, float)) else ()


def launch_of(action: dict) -> Launch:
    metrics = action["metrics"]
    major = metrics.get("device__attribute_compute_capability_major", [None, None])[1]
    minor = metrics.get("device__attribute_compute_capability_minor", [None, None])[1]
    launch = Launch(id=action["id"], kernel=action["kernel"],
                    block=_dims(metrics, "launch__block_dim", "launch__block_size"),
                    grid=_dims(metrics, "launch__grid_dim", "launch__grid_size"),
                    cc=f"{int(major)}.{int(minor)}" if isinstance(major, (int, float)) and isinstance(minor, (int, float)) else "")
    for name, (unit, value) in metrics.items():
        if name.startswith("group:"):
            continue  # metric-group listings (names of other metrics), not on the raw page either
        if isinstance(value, str):
            if value.strip():
                launch.text[name] = value.strip()
        elif isinstance(value, (int, float)):
            launch.metrics[name] = to_base(float(value), unit)
    return launch


def rules_of(action: dict) -> list[NcuRule]:
    out = []
    for r in action.get("rules", []):
        kind = r.get("type")
        if kind == 0:
            continue  # a rule that ran and said nothing: the details page leaves it out too
        kind = RULE_TYPES.get(kind, str(kind)) if not isinstance(kind, str) else kind
        speedup = r.get("speedup")
        out.append(NcuRule(launch_id=action["id"], kernel=action["kernel"], section=r.get("section", ""),
                           name=r.get("rule", ""), type=kind,
                           description=" ".join(str(r.get("message") or r.get("title") or "").split()),
                           speedup_type=SPEEDUP_TYPES.get(r.get("speedup_type"), "") if r.get("speedup_type") is not None else "",
                           speedup=float(speedup) if isinstance(speedup, (int, float)) else None))
    return out


def _opcode_base(sass: str) -> str:
    ins = SassInstruction(0, sass, "", 0)
    return ins.opcode.split(".")[0]


def source_of(action: dict) -> SourcePage | None:
    """The source model of one launch, or None when the report has no per-PC counters/locations."""
    per_pc: dict[int, dict[str, float]] = {}
    strings: dict[int, dict[str, str]] = {}
    inst = action.get("instanced", {})

    def add(pc, column, value):
        if value:
            cell = per_pc.setdefault(pc, {})
            cell[column] = cell.get(column, 0.0) + value

    for name, data in inst.items():
        pairs = list(zip(data["pcs"], data["values"]))
        if name in STRINGS:
            for pc, v in pairs:
                if isinstance(v, str) and v.strip():
                    strings.setdefault(pc, {})[name] = v.strip()
            continue
        if name.startswith(SAMPLED):
            reason = name[len(SAMPLED):]
            column = "stall_" + STALL_COLUMN.get(reason, reason)
            for pc, v in pairs:
                if isinstance(v, (int, float)):
                    add(pc, column, v)
                    add(pc, SAMPLES, v)
            continue
        column = PER_PC.get(name)
        if column is None:
            continue
        for pc, v in pairs:
            if isinstance(v, (int, float)):
                add(pc, column, v)
        if name in IDEAL:
            ideal_name, excess_column = IDEAL[name]
            ideal = dict(zip(inst.get(ideal_name, {}).get("pcs", []), inst.get(ideal_name, {}).get("values", [])))
            for pc, v in pairs:
                i = ideal.get(pc)
                if isinstance(v, (int, float)) and isinstance(i, (int, float)) and v > i:
                    add(pc, excess_column, v - i)
    where = action.get("pcs", {})
    files = action.get("files", {})
    split = {f: t.splitlines() for f, t in files.items()}
    page = SourcePage(function=action["kernel"])
    seen_lines: set[tuple[str, int]] = set()
    for key, (path, line, sass) in sorted(where.items(), key=lambda kv: int(kv[0])):
        pc = int(key)
        if not path or not line:
            continue
        if (path, line) not in seen_lines:
            seen_lines.add((path, line))
            text = split.get(path, [])
            page.lines.append(SourceLine(path, int(line), text[line - 1] if 0 < line <= len(text) else ""))
        s = strings.get(pc, {})
        base = _opcode_base(sass)
        space = s.get("memory_type") or ("Local" if base in _LOCAL else "")
        access = s.get("memory_access_type") or ("Store" if base in _STORES else "")
        page.instructions.append(SassInstruction(address=pc, sass=(sass or "").strip(), path=path, line=int(line),
                                                 values=per_pc.get(pc, {}), address_space=space, access=access,
                                                 access_size=s.get("memory_access_size_type", "")))
    return page if page.lines else None


def parse_dump(dump: dict) -> tuple[list[Launch], dict[str, list[NcuRule]], list[SourcePage]]:
    launches, rules, pages = [], {}, []
    for action in dump.get("actions", []):
        launches.append(launch_of(action))
        rules[action["id"]] = rules_of(action)
        page = source_of(action)
        if page is not None:
            pages.append(page)
    return launches, rules, pages


class ReaderProcess:
    """`dump_report` in a child process: a crash inside Nsight Compute's library (seen on the H200:
    a segfault in `IMetric.unit()` in a process that had imported torch) costs the reading, never
    the caller (the language server must not die). Started early, the child imports `ncu_report`
    while the profiled run is still going; `read()` then only loads and reads the report."""

    def __init__(self, ncu: str | None = None):
        env = dict(os.environ)
        home = str(Path(__file__).parents[3])   # where this tritonify is importable from (.../tritonify/tools/ncu/)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH", ""), home) if p)
        self.child = PipedChild([*module_command("tritonify.tools.ncu.report_reader"), "--serve", ncu or ""],
                                what="the ncu_report reader", env=env)

    def read(self, report: str, kernels: list[str] | None = None, timeout: float = 120) -> dict:
        outcome = self.child.ask(json.dumps({"report": str(report), "kernels": kernels}) + "\n", timeout)
        if outcome.status == TIMEOUT:
            raise ReaderUnavailable(f"ncu_report took more than {timeout:.0f}s to read {report}")
        if outcome.returncode != 0:
            last = outcome.stderr.strip()
            raise ReaderUnavailable(f"the ncu_report reader stopped with code {outcome.returncode}"
                                    f"{': ' + last.splitlines()[-1] if last else ''}")
        try:
            doc = json.loads(outcome.stdout)
        except ValueError:
            raise ReaderUnavailable("the ncu_report reader wrote no readable answer") from None
        if "error" in doc:
            raise ReaderUnavailable(doc["error"])
        return doc

    def close(self) -> None:
        self.child.close()


def read_report(path: str, kernels: list[str] | None = None, *, ncu: str | None = None,
                reader: ReaderProcess | None = None) -> tuple[list[Launch], dict[str, list[NcuRule]], list[SourcePage], dict]:
    """(launches, rules by launch id, source pages, the reader's timings) of an `.ncu-rep`, or
    ReaderUnavailable (the caller then exports CSV pages)."""
    reader = reader or ReaderProcess(ncu)
    try:
        dump = reader.read(path, kernels)
    finally:
        reader.close()
    return (*parse_dump(dump), dump.get("timings", {}))


# A small report (one copy kernel, SourceCounters only, captured on an H200 by
# gpu/ncu/warmup_report.py). The first SASS lookup in a process costs ~0.7 s (the disassembler
# starts), whatever the report; later lookups cost ~0.1 ms, in any report. The child does that
# first lookup here, while the profiled run is still going, so the user's report reads in ~0.1 s.
WARMUP_REPORT = Path(__file__).with_name("sass_warmup.ncu-rep")


def warm_up(mod, report: Path = WARMUP_REPORT) -> float | None:
    """One SASS lookup in the bundled report: seconds taken, or None when it could not be done
    (no report, another ncu version that cannot load it); never raises."""
    t0 = time.time()
    try:
        action = mod.load_report(str(report)).range_by_idx(0).action_by_idx(0)
        metric = action.metric_by_name("inst_executed")
        action.sass_by_pc(metric.correlation_ids().as_uint64(0))
    except Exception:
        return None
    return time.time() - t0


def _serve(argv: list[str]) -> int:
    """The child's side: import ncu_report at once and start its disassembler (`warm_up`),
    then answer one request read from stdin."""
    ncu = argv[0] if argv else None
    warm = None
    try:
        mod, error = load_module(ncu or None), None
        if WARMUP_REPORT.is_file():
            warm = warm_up(mod)
    except ReaderUnavailable as exc:
        mod, error = None, str(exc)
    line = sys.stdin.readline()
    if not line.strip():
        return 0
    request = json.loads(line)
    if error is None:
        try:
            dump = dump_report(request["report"], request.get("kernels"), module=mod)
            dump["timings"]["warmup_s"] = round(warm, 4) if warm is not None else None
            sys.stdout.write(json.dumps(dump))
            return 0
        except ReaderUnavailable as exc:
            error = str(exc)
    sys.stdout.write(json.dumps({"error": error}))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        sys.exit(_serve(sys.argv[2:]))
