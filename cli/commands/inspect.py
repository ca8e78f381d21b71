"""`tritonify inspect FILE::KERNEL`: registers, spills, shared memory and occupancy per config, without a GPU.

The kernel is compiled for `--target` (default: the local GPU, else sm_90) by Triton in a child
process running `--python` (default: this interpreter). Running the command is consent to run the
file's imports and definitions (not its top-level program; see tools/compile/compile_child.py).
Exit code: 0 clean, 1 when a config spills (CMP-K), has low occupancy (CMP-J) or does not compile
(CMP-FAIL), 2 on bad input.
"""
from __future__ import annotations

import sys
from pathlib import Path

NAME = "inspect"
HELP = "compile a kernel for a GPU target (no GPU needed): registers, spills, occupancy per config"
ORDER = 35


def add_arguments(p):
    p.add_argument("target", metavar="FILE::KERNEL", help="the kernel's file and name (KERNEL optional when the file has one)")
    p.add_argument("--target", dest="arch", default=None, help="sm_80, sm_90, sm_100, sm_120 ... (default: local GPU, else sm_90)")
    p.add_argument("--config", action="append", default=[], metavar="NAME=VALUE,...",
                   help="constexprs and options to compile with, e.g. BLOCK=1024,num_warps=8 (replaces autotune configs)")
    p.add_argument("--arg", action="append", default=[], metavar="NAME=TYPE",
                   help="argument type, e.g. x_ptr=*bf16 or n=i64 (repeatable)")
    p.add_argument("--dtype", help="element type of every pointer argument (bf16, fp16, fp32 ...)")
    p.add_argument("--no-divisibility", action="store_true",
                   help="compile without Triton's 16-byte divisibility hints (what a misaligned launch gets)")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--show", choices=["ptx", "sass", "ttgir", "ttir"], help="print this listing of the first config")
    p.add_argument("--per-line", action="store_true", help="with --show ptx/sass: print each Python line above its instructions")
    p.add_argument("--threshold", type=float, default=20.0, help="occupancy %% under which CMP-J fires (default 20)")
    p.add_argument("--python", help="interpreter that has triton (default: this one)")
    p.add_argument("--timeout", type=float, default=180.0, help="seconds before the compile is stopped")
    p.add_argument("--no-cache", action="store_true", help="recompile even when a cached result exists")


def _split(target: str) -> tuple[str, str | None]:
    if "::" in target:
        file, _, kernel = target.rpartition("::")
        return file, kernel or None
    return target, None


def run(args) -> int:
    from tritonify.diagnostics.compile.asm import annotate
    from tritonify.diagnostics.compile.findings import inspect_findings
    from tritonify.diagnostics.compile.render import to_json, to_text
    from tritonify.diagnostics.compile.result import InspectError, assembly_view
    from tritonify.diagnostics.compile.signature import (
        SignatureError,
        parse_assignments,
    )
    from tritonify.diagnostics.settings import MAX_FILE_BYTES
    from tritonify.infra.bounded_read import NotReadable, read_text
    from tritonify.tools.compile.service import inspect_kernel

    file, kernel = _split(args.target)
    path = Path(file)
    if not path.is_file():
        print(f"tritonify: error: {file}: no such file", file=sys.stderr)
        return 2
    try:
        text = read_text(path, MAX_FILE_BYTES)   # a FIFO or a link to /proc/kmsg is refused, never read
        overrides: dict = {}
        for item in args.config:
            overrides.update(parse_assignments(item))
        arg_types = {k: str(v) for item in args.arg for k, v in parse_assignments(item).items()}
        listings = ["ptx", "sass"] + ([args.show] if args.show in ("ttgir", "ttir") else [])
        result = inspect_kernel(text, str(path), kernel, target=args.arch, overrides=overrides, arg_types=arg_types,
                                dtype=args.dtype, divisible=not args.no_divisibility, listings=listings,
                                python=args.python, timeout=args.timeout, trusted=True, use_cache=not args.no_cache)
    except NotReadable as exc:
        print(f"tritonify: error: {path}: not read: {exc}", file=sys.stderr)
        return 2
    except (InspectError, SignatureError, OSError, UnicodeError) as exc:
        print(f"tritonify: error: {exc}", file=sys.stderr)
        return 2
    findings = inspect_findings(result, threshold=args.threshold / 100.0)
    if args.show:
        try:
            view = assembly_view(result, args.show)
        except InspectError as exc:
            print(f"tritonify: error: {exc}", file=sys.stderr)
            return 2
        if args.per_line and args.show in ("ptx", "sass"):
            v = result.variants[0]
            print(annotate(v.listing(args.show, result.compiled_path), text.splitlines()))
        else:
            print(view.text)
        return 0
    if args.format == "json":
        print(to_json(result, findings))
    else:
        print(to_text(result))
        for f in findings:
            print(f"{f.path}:{f.line}:{f.column + 1}: {f.code} {f.message}")
            for fix in f.fixes:
                print(f"    fix ({fix.applicability.value}): {fix.title}")
    return 1 if findings else 0
