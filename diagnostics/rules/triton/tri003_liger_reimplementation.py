"""TRI003 liger-reimplementation: a standalone kernel computes an op Liger-Kernel already ships.

The op is recognised from what the body computes (see `tritonify.diagnostics.liger.recognise`),
never from the kernel's name. Severity is information: Liger is not always faster than a good
hand-written kernel (on an H200 its RMSNorm forward reached 60% of copy bandwidth where eager
PyTorch reached 76%), so the point is maintenance: Liger's op has a tested backward, int64
offsets and dtype handling that a private copy has to keep up by itself.

In the default set (issue 26: the Liger-first policy is the project's rule). Quiet where the
policy does not apply: Liger's own tree, tests, references, providers of the ops (a package that
registers its kernels as aten implementations, a vendored copy: `liger.scope.provider_reason`),
variants and fused forms Liger does not ship (`liger.recognise`), kernels that keep a rounding on
purpose, and projects that set `liger-first = false` in `[tool.tritonify]`. One finding per op and
file (an op's backward and a variant of one kernel are not reported again).

Some ops are read with their launcher in the same file (issue 26's misses): a cross-entropy split
into an LSE kernel and a loss kernel (fused linear when the launcher's logits come from a matmul),
a KL on logits whose launcher computes both logits with matmuls (Liger's fused linear JSD at beta
0), and a GRPO per-token loss from logits (Liger's `triton_grpo_loss`).
"""
from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.fixes import import_edit
from tritonify.diagnostics.liger.api import (
    FUNCTIONAL, GRPO_FROM_LOGITS_CALL, GRPO_FROM_LOGITS_MODULE, LIGER_VERSION, OPS, TRANSFORMERS, LigerOp,
)
from tritonify.diagnostics.liger.recognise import grpo_token_loss, loss_from_a_loaded_lse, recognise, stores_row_lse
from tritonify.diagnostics.liger.scope import advice_wanted, is_reference_function, npu_backend_module, provider_reason
from tritonify.diagnostics.liger.symbolic import build_graph, specialisations
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.triton_ast import Kernel, tl_name

RULE = Rule(
    code="TRI003",
    name="liger-reimplementation",
    summary="hand-written kernel re-implements an op Liger-Kernel ships",
    severity=Severity.INFO,
    fixable=True, safe_fix=False,
    # Default (issue 26): the Liger-first policy is the project's rule. Quiet in providers of the ops
    # (Liger's own tree, vendored copies, aten implementations: diagnostics/liger/scope.py) and
    # when [tool.tritonify] sets `liger-first = false`; round 4 of the real-world study measures it
    # (benchmarks/realworld/labels/round4_*.csv).
    default=True,
)

HELPER_STEMS = {
    "rms_norm": "rms_norm", "fused_add_rms_norm": "add_rms_norm", "layer_norm": "layer_norm",
    "swiglu": "swiglu", "geglu": "geglu", "cross_entropy": "cross_entropy",
    "fused_linear_cross_entropy": "linear_cross_entropy", "softmax": "softmax", "kl_div": "kl_div",
    "jsd": "jsd", "tvd": "tvd", "rope": "apply_rope", "group_norm": "group_norm", "poly_norm": "poly_norm",
    "dyt": "dyt", "qwen2vl_mrope": "apply_mrope", "modulated_rms_norm": "modulated_rms_norm", "relu_squared": "relu_squared",
    "sparsemax": "sparsemax", "fused_linear_kl_div": "linear_kl_div", "llama4_rope": "apply_complex_rope",
}


def _module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        elif isinstance(stmt, ast.Assign):
            names.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    return names


def _helper_name(op: LigerOp, taken: set[str]) -> str:
    stem = HELPER_STEMS.get(op.key, op.key)
    for candidate in (stem, f"{stem}_liger"):
        if candidate not in taken:
            return candidate
    i = 2
    while f"{stem}_liger_{i}" in taken:
        i += 1
    return f"{stem}_liger_{i}"


def _helper_text(op: LigerOp, kernel: Kernel, name: str, indent: str) -> str:
    doc = [f'    """{op.title} through Liger-Kernel {LIGER_VERSION} (forward and backward), in place of `{kernel.name}`.']
    if op.caveat:
        doc += ["", f"    Note: {op.caveat}."]
    doc[-1] += '"""' if len(doc) == 1 else ""
    if len(doc) > 1:
        doc.append('    """')
    lines = [f"def {name}({op.helper_params}):", *doc, f"    return {op.helper_body}"]
    return "\n\n\n" + "\n".join(indent + line if line else line for line in lines)


def _fix(ctx: PythonContext, kernel: Kernel, op: LigerOp) -> Fix:
    node = kernel.node
    end_line = node.end_lineno or node.lineno
    end_col = len(ctx.source.lines[end_line - 1]) if end_line - 1 < len(ctx.source.lines) else 0
    name = _helper_name(op, _module_names(ctx.tree))
    indent = " " * node.col_offset
    edits = [Edit.insert(end_line, end_col, _helper_text(op, kernel, name, indent))]
    imp = import_edit(ctx.source, op.functional_path, op.functional)
    if imp is not None:
        edits.insert(0, imp)
    return Fix(
        title=f"Add `{name}()` calling Liger's {op.functional} beside `{kernel.name}`",
        edits=tuple(edits),
        applicability=Applicability.UNSAFE,  # adds a dependency on liger-kernel; the kernel stays
    )


def _name_anchor(ctx: PythonContext, kernel: Kernel, finding: Finding) -> Finding:
    """Point the finding at the kernel's name, not its whole body."""
    node = kernel.node
    line_text = ctx.source.lines[node.lineno - 1] if node.lineno - 1 < len(ctx.source.lines) else ""
    col = line_text.find(f"def {kernel.name}")
    if col >= 0:
        col += len("def ")
        finding.line = finding.end_line = node.lineno
        finding.column, finding.end_column = col, col + len(kernel.name)
    return finding


def _message(kernel: Kernel, op: LigerOp, differs: str = "") -> str:
    caveat = f" (note: {op.caveat})" if op.caveat else ""
    if differs:
        return (
            f"`{kernel.name}` re-implements {op.title} ({op.signature}), which Liger-Kernel {LIGER_VERSION} ships with a tested "
            f"backward as `{op.module_api}` or `{op.functional_api}`, but {differs}{caveat}"
        )
    return (
        f"`{kernel.name}` re-implements {op.title} ({op.signature}), which Liger-Kernel {LIGER_VERSION} ships with a tested "
        f"backward: use `{op.module_api}` or `{op.functional_api}`{caveat}"
    )


def _condition(param: str, value: object) -> str:
    if value is True:
        return f"`{param}` is true"
    if value is False:
        return f"`{param}` is false"
    return f"`{param} == {value!r}`"


def _compares_strings(ctx: PythonContext, kernel: Kernel, helpers: dict | None = None) -> bool:
    """The kernel's text compares something with a string literal (`ACT == "silu"`), or a @jit
    helper of the file it calls does (`_act(x, ACT)` with `if ACT == "silu":` inside): cheap
    test before looking for string-selected branches."""
    def compares(node: ast.AST) -> bool:
        lines = ctx.source.lines[node.lineno - 1:node.end_lineno or node.lineno]
        return any(("== \"" in line or "== '" in line) for line in lines)

    if compares(kernel.node):
        return True
    if not helpers:
        return False
    called = {c.func.id for c in kernel.calls() if isinstance(c.func, ast.Name) and c.func.id in helpers}
    return any(compares(helpers[name]) for name in called if helpers[name] is not kernel.node)


def _branches(ctx: PythonContext, kernel: Kernel, helpers: dict, found: tuple[str, ...], op: str | None):
    """(param, [(value, op)]) when fixing one constexpr parameter makes the kernel compute
    different Liger ops (`if ACT == "silu": ... elif ACT == "gelu": ...`, `if IS_RMS_NORM:`), or
    a Liger op in some branch of a string selector where the kernel as a whole is none
    (`if ACT == "silu"` beside activations Liger does not ship). A flag that only switches an
    extra off (`EMIT_FP8`, `HAS_KV_STORE`) does not make a fused kernel a standalone one."""
    if not found and not _compares_strings(ctx, kernel, helpers):
        return None
    candidates = specialisations(kernel, helpers=helpers)
    if not found:
        # an op selected by a string (`ACT == "silu"`) is hidden under the branch merge: try those
        # whose strings name an activation (other selectors, `MODE == "top_k"`, choose no Liger op)
        candidates = [(p, vs) for p, vs in candidates
                      if any(isinstance(v, str) and ACTIVATION_WORD.search(v) for v in vs)]
    for param, values in candidates:
        ops = []
        for value in values:
            graph = build_graph(kernel, ctx.imports, helpers, fixed={param: value})
            result = recognise(graph) if graph is not None else None
            if result is not None and result.op is not None and not result.differs:
                ops.append((value, result.op))
        distinct = {o for _, o in ops}
        chooser = any(isinstance(v, str) for v in values)   # `ACT == "silu"`: a selector, not an on/off extra
        if len(distinct) >= 2 or (distinct and op is None and chooser):
            return param, ops
    return None


ACTIVATION_WORD = re.compile(r"silu|swish|gelu|tanh|relu|sigmoid|glu|softmax|norm|rope|rotary", re.I)


def _branch_message(kernel: Kernel, param: str, ops: list[tuple[object, str]]) -> str:
    parts = []
    for value, key in ops:
        op = OPS[key]
        parts.append(f"re-implements {op.title} when {_condition(param, value)} ({op.signature}; use `{op.functional_api}`)")
    if len(parts) == 1:
        return (f"`{kernel.name}` is specialised by the constexpr `{param}`: it " + parts[0]
                + f", which Liger-Kernel {LIGER_VERSION} ships with a tested backward")
    return (f"`{kernel.name}` is specialised by the constexpr `{param}`: it " + " and ".join(parts)
            + f"; Liger-Kernel {LIGER_VERSION} ships each with a tested backward")


# `_differences_from_liger` says this when Liger's op computes another function: no finding then
# (policy: a variant is a finding only when Liger ships that variant).
NOT_A_DROP_IN = "not a drop-in"
# A kernel named as an op's backward (`_rms_norm_bwd_kernel`, `swiglu_fwdbwd_kernel`, `*_grad_*`).
BACKWARD_NAME = re.compile(r"bwd|backward|grad", re.I)
POLICY = " (Liger-first policy; `liger-first = false` in [tool.tritonify] turns this advice off)"


# The kernel's own words say its numerics are deliberate: it rounds like a reference on purpose.
PARITY_WORDS = re.compile(r"round(?:s|ed|ing)?\b[^\n]{0,60}\b(?:differently|parity|match(?:es|ing)?|same points)"
                          r"|bit[- ]?exact|bitwise|torch\.equal|do not contract", re.I)
# A module docstring that says the file reproduces a reference implementation's numerics (a
# module docstring also names what it does *not* match, so only this positive phrasing counts).
MODULE_PARITY = re.compile(r"numerics of the reference|reference(?:'s)? (?:\w+ )?numerics|match(?:es|ing)? the reference", re.I)
_NARROW = {"bfloat16", "float16"}
# Calls that pin one rounding: IEEE round-to-nearest division where the default is approximate.
_PINNED_ROUNDING = {"div_rn"}


def _module_docstring(ctx: PythonContext) -> str:
    body = ctx.tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0].value.value
    return ""


def _launched_without_fp_fusion(ctx: PythonContext, kernel: Kernel) -> bool:
    """A launch of the kernel in this file passes `enable_fp_fusion=False`: the author turned off
    the compiler's FMA contraction to keep each multiply and add rounded separately."""
    for node in ctx.module_calls:
        func = node.func
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name) and func.value.id == kernel.name:
            for kw in node.keywords:
                if kw.arg == "enable_fp_fusion" and isinstance(kw.value, ast.Constant) and kw.value.value is False:
                    return True
    return False


def _deliberate_numerics(ctx: PythonContext, kernel: Kernel) -> bool:
    """The kernel keeps a rounding on purpose, so Liger's op (which rounds otherwise) is not what
    its author wants: a comment or docstring in or just above it, or the module's docstring, says so
    (`1 / sqrt rounds differently from rsqrt`, `matching aten`, `bit-exact`, `numerics of the
    reference implementation`, `do not contract to FMA`); it rounds an intermediate to a 16-bit type
    and back in the middle of the op (`(x * c).to(tl.bfloat16).to(tl.float32)`); it divides with
    `div_rn` (IEEE rounding pinned); or a launch turns FMA contraction off (`enable_fp_fusion=False`)."""
    first = max(kernel.node.lineno - 4, 0)
    last = kernel.node.end_lineno or kernel.node.lineno
    if PARITY_WORDS.search("\n".join(ctx.source.lines[first:last])):
        return True
    doc = _module_docstring(ctx)
    if doc and MODULE_PARITY.search(doc):
        return True
    for call in kernel.calls():
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _PINNED_ROUNDING:
            return True
        if isinstance(func, ast.Attribute) and func.attr == "to" and isinstance(func.value, ast.Call):
            inner = func.value
            if isinstance(inner.func, ast.Attribute) and inner.func.attr == "to" and inner.args \
                    and isinstance(inner.args[0], ast.Attribute) and inner.args[0].attr in _NARROW \
                    and call.args and isinstance(call.args[0], ast.Attribute) and call.args[0].attr == "float32":
                return True
    return "enable_fp_fusion" in ctx.source.text and _launched_without_fp_fusion(ctx, kernel)


_LOOP_CALLS = {"range", "static_range"}
_ALLOCATORS = {"empty", "empty_like", "zeros", "zeros_like", "full", "full_like", "new_empty", "new_zeros"}
_FP32_NAMES = {"float", "float32"}


def _output_in_another_dtype(ctx: PythonContext, kernel: Kernel) -> bool:
    """A launch of the kernel in this file passes a tensor its launcher allocated as float32
    (`dtype=torch.float32`, or `dtype=dtype` with a `torch.float` default on the launcher): the
    probabilities are kept in fp32 whatever the input, where Liger's softmax returns the input's
    dtype (round 6, r6-0009: fla's softmax keeps p in fp32 for its backward)."""
    for call in ctx.module_calls:
        func = call.func
        if not (isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name) and func.value.id == kernel.name):
            continue
        scope = next((a for a in ctx.ancestors(call) if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
        if scope is None:
            continue
        passed = {a.id for a in [*call.args, *(k.value for k in call.keywords)] if isinstance(a, ast.Name)}
        for node in ast.walk(scope):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id in passed and isinstance(node.value, ast.Call)):
                continue
            alloc = node.value.func
            if not (isinstance(alloc, ast.Attribute) and alloc.attr in _ALLOCATORS):
                continue
            dtype = next((k.value for k in node.value.keywords if k.arg == "dtype"), None)
            if isinstance(dtype, ast.Name):
                # a parameter of the launcher with a float32 default (`dtype: torch.dtype = torch.float`)
                args = scope.args
                params = [*args.posonlyargs, *args.args]
                defaults = dict(zip([a.arg for a in params[len(params) - len(args.defaults):]], args.defaults))
                defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
                dtype = defaults.get(dtype.id)
            if isinstance(dtype, ast.Attribute) and dtype.attr in _FP32_NAMES \
                    and isinstance(dtype.value, ast.Name) and dtype.value.id == "torch":
                return True
    return False


def _names_bound_to_a_load(ctx: PythonContext, kernel: Kernel) -> set[str]:
    """The names the kernel assigns a `tl.load(...)` to (a `.to(dtype)` of it included)."""
    loaded: set[str] = set()
    for node in kernel.nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to":
                value = value.func.value
            if isinstance(value, ast.Call) and tl_name(ctx.imports, value.func) == "load":
                loaded.add(node.targets[0].id)
    return loaded


def _extent_read_from_memory(ctx: PythonContext, kernel: Kernel) -> bool:
    """A loop of the kernel runs to a bound loaded from memory (`n = tl.load(masked_m + expert)`,
    `for t in tl.range(start, n, step)`): the rows it covers are a data-dependent count per group
    (an MoE layout padded per expert, variable-length sequences), not the dense tensor Liger's ops
    take."""
    loaded = _names_bound_to_a_load(ctx, kernel)
    if not loaded:
        return False
    for node in kernel.nodes:
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
            func = node.iter.func
            is_range = (isinstance(func, ast.Name) and func.id == "range") or tl_name(ctx.imports, func) in _LOOP_CALLS
            if is_range and any(isinstance(n, ast.Name) and n.id in loaded
                                for arg in node.iter.args[1:2] or node.iter.args[:1] for n in ast.walk(arg)):
                return True
    return False


# Liger's elementwise ops: a row skipped on a loaded id is a routed layout for them (a cross-entropy
# returning early on `target == ignore_index` is its own op's rule, not a layout).
_ELEMENTWISE_OPS = frozenset({"swiglu", "geglu", "rope", "qwen2vl_mrope", "relu_squared", "llama4_rope"})


def _returns_on_a_loaded_value(ctx: PythonContext, kernel: Kernel) -> bool:
    """The kernel returns early when a value it loads matches a test (`expert_id = tl.load(
    expert_ids + pid); if expert_id == -1: return`): its rows are a routed layout (MoE experts
    filtered per row, padded slots), the class of round 5's padded silu_and_mul, not the dense
    tensor Liger's elementwise ops take."""
    loaded = _names_bound_to_a_load(ctx, kernel)
    if not loaded:
        return False
    for node in kernel.nodes:
        if isinstance(node, ast.If) and any(isinstance(s, ast.Return) for s in node.body) \
                and any(isinstance(n, ast.Name) and n.id in loaded for n in ast.walk(node.test)):
            return True
    return False


def _matmul_without_log(kernel: Kernel) -> bool:
    """The kernel calls a `dot` and nothing named like a log: the recogniser would read it as a
    matmul or attention kernel (no Liger op), so its graph is not built (a cheap screen; fused
    linear cross-entropy, the one op with a dot, takes a log for its log-sum-exp)."""
    names = set()
    for call in kernel.calls():
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        names.add(name)
    return "dot" in names and not any("log" in n for n in names)


_LINEAR_CALLS = {"linear", "matmul", "mm", "addmm", "bmm"}
_COLLECTIVES = {"all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor"}


def _enclosing_function(ctx: PythonContext, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    return next((a for a in ctx.ancestors(node) if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))), None)


def _launched_name(call: ast.Call) -> str | None:
    func = call.func
    return func.value.id if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name) else None


def _is_matmul(node: ast.expr) -> bool:
    """`F.linear(x, w)`, `torch.matmul`, `torch.mm`, `torch.addmm`, `x @ w`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return name in _LINEAR_CALLS
    return False


def _matmul_arguments(host: ast.AST, launch: ast.Call) -> set[str]:
    """The launch's tensor arguments that the host assigns from a matmul (`c_logits = F.linear(...)`)."""
    passed = {a.id for a in [*launch.args, *(k.value for k in launch.keywords)] if isinstance(a, ast.Name)}
    out = set()
    for node in ast.walk(host):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in passed and _is_matmul(node.value):
            out.add(node.targets[0].id)
    return out


def _host_calls(host: ast.AST) -> tuple[list[ast.Call], set[str]]:
    calls = [n for n in ast.walk(host) if isinstance(n, ast.Call)]
    names = {c.func.attr if isinstance(c.func, ast.Attribute) else c.func.id if isinstance(c.func, ast.Name) else ""
             for c in calls}
    return calls, names


def _fused_linear_kl(ctx: PythonContext, kernel: Kernel) -> str | None:
    """The launcher, when a KL kernel that takes logits is launched on two logits tensors the same
    host function computes with matmuls (`c_sl = F.linear(c_sx, weight)`, `c_tl = F.linear(c_tx,
    target_weight)`: fla's FusedKLDivLoss), and runs no collective: the fused linear distillation
    loss Liger ships as `liger_fused_linear_jsd(..., jsd_beta=0.0)` (beta 0 is the forward KL)."""
    for launch, host, _, _ in _launching_hosts(ctx, kernel):
        if len(_matmul_arguments(host, launch)) >= 2:
            return host.name
    return None


def _launching_hosts(ctx: PythonContext, kernel: Kernel):
    """(launch, the host function of this file that holds it, its calls, the names it calls) for each
    launch of `kernel` whose host function runs no collective (`all_reduce`: work split across ranks,
    which Liger's single-device ops do not do)."""
    for launch in ctx.launches.get(kernel.name, []):
        host = _enclosing_function(ctx, launch)
        if host is None:
            continue
        calls, names = _host_calls(host)
        if names & _COLLECTIVES:
            continue
        yield launch, host, calls, names


def _kl_message(kernel: Kernel, op: LigerOp, host: str) -> str:
    return (f"`{kernel.name}` re-implements {op.title} ({op.signature}): `{host}` computes both logits with "
            f"matmuls and this kernel takes their log-softmax and the KL between them, which Liger-Kernel "
            f"{LIGER_VERSION} ships with a tested backward as `{TRANSFORMERS}.LigerFusedLinearJSD(jsd_beta=0.0)` or "
            f"`{FUNCTIONAL}.liger_fused_linear_jsd(student_input, student_weight, teacher_input, teacher_weight, "
            f"jsd_beta=0.0)` (note: {op.caveat})")


def _split_cross_entropy(ctx: PythonContext, kernel: Kernel, graph, helpers: dict) -> tuple[str, str, str] | None:
    """(op, LSE kernel, launcher) when `kernel` is the loss half of a cross-entropy split over two
    kernels of this file (issue 26: fla's Ascend fused linear cross-entropy): it loads a row's
    log-sum-exp and gathers the target logit (`loss_from_a_loaded_lse`), another kernel of the file
    stores a full row's log-sum-exp, and one host function launches the loss kernel and, itself or
    through a function of this file it calls, the LSE kernel. The op is fused linear
    cross-entropy when that function computes the logits with a matmul (`F.linear`, `torch.mm`,
    `@`), else cross-entropy. Quiet when the function runs a collective (`all_reduce`: the
    vocabulary split across ranks, which Liger's single-device op does not do)."""
    launches = ctx.launches.get(kernel.name, [])
    if not launches or not loss_from_a_loaded_lse(graph):
        return None   # (the launch is looked up first: a dict read, before a walk of the graph)
    partners: dict[str, bool] = {}

    def lse_kernel(name: str) -> bool:
        if name not in partners:
            other = next((k for k in ctx.kernels if k.name == name and not k.is_helper), None)
            g = build_graph(other, ctx.imports, helpers) if other is not None and other is not kernel else None
            partners[name] = g is not None and stores_row_lse(g)
        return partners[name]

    functions = {n.name: n for n in ctx.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for launch, host, calls, names in _launching_hosts(ctx, kernel):
        lse = next((n for c in calls if (n := _launched_name(c)) and n != kernel.name and lse_kernel(n)), None)
        if lse is None:   # one level down: a launcher of this file the host calls (`c_lse = row_lse(c_logits)`)
            for c in calls:
                callee = functions.get(c.func.id) if isinstance(c.func, ast.Name) else None
                if callee is None or callee is host:
                    continue
                lse = next((n for sub in ast.walk(callee) if isinstance(sub, ast.Call)
                            and (n := _launched_name(sub)) and n != kernel.name and lse_kernel(n)), None)
                if lse is not None:
                    break
        if lse is None:
            continue
        linear = bool(_matmul_arguments(host, launch))
        return ("fused_linear_cross_entropy" if linear else "cross_entropy"), lse, host.name
    return None


def _grpo_message(kernel: Kernel) -> str:
    return (f"`{kernel.name}` re-implements the GRPO per-token policy loss from logits (logp = logit[token] - "
            f"logsumexp, the k3 KL against a reference log-probability, one advantage per row), which Liger-Kernel "
            f"{LIGER_VERSION} ships with a tested backward as `{GRPO_FROM_LOGITS_MODULE}.{GRPO_FROM_LOGITS_CALL}` "
            f"(note: pass your beta and temperature, 1.0 where the logits are not scaled (the default is 0.9), "
            f"old_logp=None for the on-policy ratio of 1, completion_ids as the completion's tokens only, and "
            f"reduce=False for the per-token loss: it returns (per_token_loss, per_token_kl, is_clipped))")


def _split_message(kernel: Kernel, op: LigerOp, lse: str, host: str) -> str:
    caveat = f" (note: {op.caveat})" if op.caveat else ""
    logits = f", on logits that `{host}` computes with a matmul" if op.key == "fused_linear_cross_entropy" else f" (launched by `{host}`)"
    return (f"`{kernel.name}` re-implements {op.title} split over two kernels: `{lse}` stores each "
            f"row's log-sum-exp and `{kernel.name}` loads it, gathers the logit at the target and writes "
            f"`lse - logit[target]`{logits}; Liger-Kernel {LIGER_VERSION} ships the whole loss with a tested "
            f"backward: use `{op.module_api}` or `{op.functional_api}`{caveat}")


def _variant_of(name: str, reported: str) -> bool:
    """`name` is the backward of, or a variant of, a kernel already reported for the same op in
    this file: named as a backward, or sharing most of its name (`layer_norm_fwd_kernel` and
    `layer_norm_fwd_kernel_row`)."""
    if BACKWARD_NAME.search(name):
        return True
    a, b = name.lstrip("_"), reported.lstrip("_")
    common = len(os.path.commonprefix([a, b]))
    return common >= max(8, 0.6 * min(len(a), len(b)))


def check(ctx: PythonContext) -> Iterator[Finding]:
    for _kernel, finding, _why in assess(ctx):
        if finding is not None:
            yield finding


def assess(ctx: PythonContext) -> Iterator[tuple[Kernel | None, Finding | None, str]]:
    """TRI003's verdict on each kernel of the file, in order: `(kernel, finding, "")` for a kernel
    reported, `(kernel, None, why)` for one left quiet, and a single `(None, None, why)` when the
    whole file is out of the policy's scope (Liger's tree, a test, `liger-first = false`, an NPU
    twin, a provider). `check` reports the findings; `benchmarks/realworld/liger_census.py` counts
    the reasons, so a census of the quiet kernels reads the rule's own decisions."""
    if not ctx.kernels:
        return
    if not advice_wanted(ctx.source.path):
        yield None, None, "Liger's own source, a test or a reference file"
        return   # Liger's own source and tests keep their kernels on purpose
    if getattr(ctx.settings, "liger_first", True) is False:
        yield None, None, "liger-first = false"
        return   # the project opted out of the Liger-first policy
    if npu_backend_module(ctx.source.path):
        yield None, None, "an NPU backend's twin of a GPU kernel"
        return   # an NPU backend's twin of a GPU kernel: the GPU module's finding carries the advice
    helpers = {k.name: k.node for k in ctx.kernels}
    reported: dict[str, list[str]] = {}
    provider_checked = False   # asked once a kernel passes the cheap screens (it reads the text and the folder)

    def variant(key: str, name: str) -> str | None:
        return next((o for o in reported.get(key, []) if _variant_of(name, o)), None)

    for kernel in ctx.kernels:
        if kernel.is_helper or is_reference_function(kernel.name):
            # a helper's work is judged where it is inlined; a reference is kept to check
            yield kernel, None, "a @jit helper (judged in its caller)" if kernel.is_helper else "a reference implementation"
            continue
        if _matmul_without_log(kernel):
            yield kernel, None, "a matmul or attention kernel"   # only fused linear CE (dot + log-sum-exp) is an op
            continue
        if _deliberate_numerics(ctx, kernel):
            yield kernel, None, "rounding kept on purpose"   # Liger's op would not be a drop-in
            continue
        if _extent_read_from_memory(ctx, kernel):
            yield kernel, None, "a loop to a count loaded from memory (padded MoE or varlen rows)"
            continue
        if not provider_checked:
            provider_checked = True
            provider = provider_reason(ctx.source.path, ctx.source.text)
            if provider is not None:
                yield None, None, f"a provider of the ops ({provider})"
                return   # the kernels are this package's product (an aten provider, a vendored copy)
        graph = build_graph(kernel, ctx.imports, helpers)
        if graph is None:
            yield kernel, None, "too large to analyse"
            continue
        result = recognise(graph)
        branches = _branches(ctx, kernel, helpers, result.found, result.op)
        if branches is not None:
            if {op for _, op in branches[1]} <= _ELEMENTWISE_OPS and _returns_on_a_loaded_value(ctx, kernel):
                yield kernel, None, "rows filtered by a loaded id (MoE routing)"
                continue
            key = "+".join(sorted({op for _, op in branches[1]}))
            other = variant(key, kernel.name)
            if other is not None:
                yield kernel, None, f"a variant or backward of `{other}`, reported"
                continue
            reported.setdefault(key, []).append(kernel.name)
            finding = ctx.finding(kernel.node, _branch_message(kernel, *branches) + POLICY, [])
            yield kernel, _name_anchor(ctx, kernel, finding), ""
            continue
        if result.op is None and not result.found:
            split = _split_cross_entropy(ctx, kernel, graph, helpers)
            if split is None:
                yield kernel, None, "no Liger op read"
                continue
            other = variant(split[0], kernel.name)
            if other is not None:
                yield kernel, None, f"a variant or backward of `{other}`, reported"
                continue
            reported.setdefault(split[0], []).append(kernel.name)
            op = OPS[split[0]]
            finding = ctx.finding(kernel.node, _split_message(kernel, op, split[1], split[2]) + POLICY, [])
            yield kernel, _name_anchor(ctx, kernel, finding), ""
            continue
        if result.reason.startswith("policy-gradient") and grpo_token_loss(graph):
            other = variant("grpo", kernel.name)
            if other is not None:
                yield kernel, None, f"a variant or backward of `{other}`, reported"
                continue
            reported.setdefault("grpo", []).append(kernel.name)
            yield kernel, _name_anchor(ctx, kernel, ctx.finding(kernel.node, _grpo_message(kernel) + POLICY, [])), ""
            continue
        if result.op == "kl_div" and result.differs:
            host = _fused_linear_kl(ctx, kernel)   # KL on logits, both from matmuls: Liger's fused linear JSD, beta 0
            if host is None:
                yield kernel, None, "a KL divergence on logits whose launcher does not compute both with matmuls"
                continue
            other = variant("fused_linear_kl_div", kernel.name)
            if other is not None:
                yield kernel, None, f"a variant or backward of `{other}`, reported"
                continue
            reported.setdefault("fused_linear_kl_div", []).append(kernel.name)
            finding = ctx.finding(kernel.node, _kl_message(kernel, OPS["fused_linear_kl_div"], host) + POLICY, [])
            yield kernel, _name_anchor(ctx, kernel, finding), ""
            continue
        if result.op is None:
            yield kernel, None, result.reason or "no Liger op read"
            continue
        if NOT_A_DROP_IN in result.differs:
            yield kernel, None, result.differs   # Liger ships a different function (exact GELU, interleaved pairs, logits in)
            continue
        if result.op in _ELEMENTWISE_OPS and _returns_on_a_loaded_value(ctx, kernel):
            yield kernel, None, "rows filtered by a loaded id (MoE routing)"   # not a dense tensor
            continue
        if result.op == "softmax" and _output_in_another_dtype(ctx, kernel):
            yield kernel, None, "a softmax whose output dtype is chosen (fp32 probabilities)"
            continue
        other = variant(result.op, kernel.name)
        if other is not None:
            yield kernel, None, f"a variant or backward of `{other}`, reported"   # one finding per op
            continue
        reported.setdefault(result.op, []).append(kernel.name)
        op = OPS[result.op]
        finding = ctx.finding(kernel.node, _message(kernel, op, result.differs) + POLICY,
                              [] if result.differs else [_fix(ctx, kernel, op)])
        yield kernel, _name_anchor(ctx, kernel, finding), ""
