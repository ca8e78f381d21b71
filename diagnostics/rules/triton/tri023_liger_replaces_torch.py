"""TRI023 liger-replaces-torch: PyTorch host code for which Liger-Kernel ships a Triton op or patch.

Recognised statically (neither the user's file nor liger is imported):

* `torch.nn.RMSNorm(...)` / `torch.nn.LayerNorm(...)` / `torch.nn.GroupNorm(...)` modules ->
  `LigerRMSNorm` / `LigerLayerNorm` / `LigerGroupNorm` (channels and groups swapped), with eps
  written out because the defaults differ (nn.LayerNorm and nn.GroupNorm 1e-5, Liger 1e-6;
  nn.RMSNorm None = machine epsilon of the dtype, LigerRMSNorm 1e-6);
* cross-entropy of an `lm_head` projection (`F.cross_entropy(lm_head(h).view(-1, V), y)`, also
  through a local `logits = ...` and a causal shift) -> fused linear cross-entropy, which never
  materialises the (tokens x vocab) logits;
* Hugging Face model classes that an `apply_liger_kernel_to_<arch>` function patches, built
  without Liger anywhere in the file -> that function, called before the model is built;
* hand-written DPO / ORPO / CPO / SimPO / GRPO losses over token log-probs -> the fused-linear
  losses of `liger_kernel.chunked_loss` (see `tritonify.diagnostics.liger.preference`).
"""
from __future__ import annotations

import ast
from bisect import bisect_right
from collections.abc import Iterator

from tritonify.diagnostics.context import PythonContext
from tritonify.diagnostics.fixes import import_edit
from tritonify.diagnostics.liger.scope import advice_wanted, imports_inference_engine, in_spans, reference_spans
from tritonify.diagnostics.liger import api
from tritonify.diagnostics.liger.host import (
    Projection,
    cross_entropy_objects,
    is_cross_entropy_call,
    lm_head_projection,
)
from tritonify.diagnostics.liger.preference import (
    LOSS_CALLS,
    MIN_CALLS,
    LossMatch,
    local_resolver,
    policy_clip_loss,
    preference_loss,
    token_logp_evidence,
)
from tritonify.diagnostics.model import Applicability, Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule

RULE = Rule(
    code="TRI023",
    name="liger-replaces-torch",
    summary="PyTorch host code that a Liger-Kernel module or patch replaces",
    severity=Severity.INFO,
    language="python-host",
    fixable=True, safe_fix=False,
    # Opt-in: 0 of 2 findings were true positives in round 2 of the real-world study
    # (benchmarks/realworld/labels/round2_*.csv), under the 90% the default set requires.
    default=False,
)

V = api.LIGER_VERSION
RMS_PATHS = {"torch.nn.RMSNorm", "torch.nn.modules.normalization.RMSNorm"}
LN_PATHS = {"torch.nn.LayerNorm", "torch.nn.modules.normalization.LayerNorm"}
GN_PATHS = {"torch.nn.GroupNorm", "torch.nn.modules.normalization.GroupNorm"}
BUILDERS = {"from_pretrained", "from_config", "_from_config"}
CE_KWARGS = {"ignore_index": "ignore_index", "reduction": "reduction", "label_smoothing": "label_smoothing", "weight": "ce_weight"}


def _kw(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


def _is_false(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _hidden_size(ctx: PythonContext, call: ast.Call) -> str | None:
    """The single normalised size as text (`4096`, `cfg.hidden`, `(d,)` -> `d`), else None."""
    shape = call.args[0] if call.args else (_kw(call, "normalized_shape").value if _kw(call, "normalized_shape") else None)
    if shape is None:
        return None
    if isinstance(shape, (ast.Tuple, ast.List)):
        return ctx.segment(shape.elts[0]) if len(shape.elts) == 1 else None
    return ctx.segment(shape)


def _normalises_several_dims(ctx: PythonContext, call: ast.Call) -> bool:
    """nn.RMSNorm([16, dim]) normalises over two dims; Liger's modules only over the last."""
    shape = call.args[0] if call.args else (_kw(call, "normalized_shape").value if _kw(call, "normalized_shape") else None)
    return isinstance(shape, (ast.Tuple, ast.List)) and len(shape.elts) > 1


def _import(ctx: PythonContext, module: str, name: str) -> list[Edit]:
    edit = import_edit(ctx.source, module, name)
    return [edit] if edit is not None else []


# ---- norms ----------------------------------------------------------------------------------
def _rms_norm(ctx: PythonContext, call: ast.Call) -> Finding:
    eps = _kw(call, "eps")
    eps_text = ctx.segment(eps.value) if eps is not None else "1e-6"
    message = (
        f"`nn.RMSNorm` can be Liger-Kernel {V}'s Triton RMSNorm: "
        f"`{api.TRANSFORMERS}.{api.RMS_NORM_MODULE}(hidden_size, eps=1e-6)` (same `weight` parameter"
        + ("; nn.RMSNorm's eps=None means the dtype's machine epsilon, write eps explicitly)" if eps is None else ")")
    )
    fixes = []
    size = _hidden_size(ctx, call)
    allowed = {"normalized_shape", "eps", "elementwise_affine"}
    if size is not None and all(k.arg in allowed for k in call.keywords) and len(call.args) <= 2:
        if len(call.args) == 2:
            eps_text = ctx.segment(call.args[1])
        affine = _kw(call, "elementwise_affine")
        extra = f", elementwise_affine={ctx.segment(affine.value)}" if affine is not None else ""
        text = f"{api.RMS_NORM_MODULE}({size}, eps={eps_text}{extra})"
        fixes.append(Fix(
            title=f"Replace with {api.RMS_NORM_MODULE}({size}, eps={eps_text})",
            edits=(*_import(ctx, api.TRANSFORMERS, api.RMS_NORM_MODULE), ctx.replace(call, text)),
            applicability=Applicability.UNSAFE,
        ))
    return ctx.finding(call.func, message, fixes)


def _layer_norm(ctx: PythonContext, call: ast.Call) -> Finding | None:
    if _is_false((_kw(call, "elementwise_affine") or ast.keyword(value=None)).value):
        return None  # LigerLayerNorm always has a weight: not a drop-in
    eps = _kw(call, "eps")
    eps_text = ctx.segment(eps.value) if eps is not None else (ctx.segment(call.args[1]) if len(call.args) > 1 else "1e-5")
    no_bias = _is_false((_kw(call, "bias") or ast.keyword(value=None)).value)
    message = (
        f"`nn.LayerNorm` can be Liger-Kernel {V}'s Triton LayerNorm: `{api.TRANSFORMERS}.{api.LAYER_NORM_MODULE}"
        f"(hidden_size, eps={eps_text})`; write eps out, Liger's default is 1e-6 where nn.LayerNorm's is 1e-5"
        + ("; Liger always keeps a (zero-initialised, trainable) bias" if no_bias else "")
    )
    fixes = []
    size = _hidden_size(ctx, call)
    allowed = {"normalized_shape", "eps", "elementwise_affine"}
    if size is not None and not no_bias and all(k.arg in allowed for k in call.keywords) and len(call.args) <= 2:
        # bias=False in Liger is a zero-initialised Parameter, like nn.LayerNorm's bias;
        # bias=True would initialise it with randn.
        text = f"{api.LAYER_NORM_MODULE}({size}, eps={eps_text})"
        fixes.append(Fix(
            title=f"Replace with {text}",
            edits=(*_import(ctx, api.TRANSFORMERS, api.LAYER_NORM_MODULE), ctx.replace(call, text)),
            applicability=Applicability.UNSAFE,
        ))
    return ctx.finding(call.func, message, fixes)


def _arg(call: ast.Call, index: int, name: str) -> ast.expr | None:
    """The argument given positionally at `index` or by keyword `name`."""
    if len(call.args) > index:
        return call.args[index]
    kw = _kw(call, name)
    return kw.value if kw is not None else None


def _group_norm(ctx: PythonContext, call: ast.Call) -> Finding | None:
    """nn.GroupNorm(num_groups, num_channels, eps=1e-5, affine=True) -> LigerGroupNorm(num_channels, num_groups, eps)."""
    if _is_false(_arg(call, 3, "affine")):
        return None  # LigerGroupNorm always has a weight and a bias: not a drop-in
    groups, channels, eps = _arg(call, 0, "num_groups"), _arg(call, 1, "num_channels"), _arg(call, 2, "eps")
    eps_text = ctx.segment(eps) if eps is not None else "1e-5"
    message = (
        f"`nn.GroupNorm` can be Liger-Kernel {V}'s Triton GroupNorm: `{api.GROUP_NORM_MODULE_PATH}.{api.GROUP_NORM_MODULE}"
        f"(num_channels, num_groups, eps={eps_text})`: channels FIRST (nn.GroupNorm takes groups first); write eps out, "
        f"Liger's default is 1e-6 where nn.GroupNorm's is 1e-5; the input needs at least 3 dims; "
        f"in {V} the module's repr() raises AttributeError, so `print(model)` fails"
    )
    fixes = []
    allowed = {"num_groups", "num_channels", "eps", "affine"}
    if groups is not None and channels is not None and all(k.arg in allowed for k in call.keywords) and len(call.args) <= 4:
        text = f"{api.GROUP_NORM_MODULE}({ctx.segment(channels)}, {ctx.segment(groups)}, eps={eps_text})"
        fixes.append(Fix(
            title=f"Replace with {text}",
            edits=(*_import(ctx, api.GROUP_NORM_MODULE_PATH, api.GROUP_NORM_MODULE), ctx.replace(call, text)),
            applicability=Applicability.UNSAFE,
        ))
    return ctx.finding(call.func, message, fixes)


# ---- fused linear cross-entropy ---------------------------------------------------------
def _enclosing_function(ctx: PythonContext, node: ast.AST) -> ast.AST | None:
    for anc in ctx.ancestors(node):
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return anc
    return ctx.tree


def _flce_text(ctx: PythonContext, call: ast.Call, proj: Projection) -> str | None:
    if len(call.args) < 2 or not proj.reshaped:
        return None
    ce_kwargs = []
    for k in call.keywords:
        if k.arg not in CE_KWARGS:
            return None
        ce_kwargs.append(f"{CE_KWARGS[k.arg]}={ctx.segment(k.value)}")
    base = ctx.segment(proj.hidden)
    if not isinstance(proj.hidden, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
        base = f"({base})"
    shifted = f"{base}[{ctx.segment(proj.shift.slice)}]" if proj.shift is not None else base
    flat = f"{shifted}.reshape(-1, {base}.size(-1))"
    args = [flat, proj.weight, ctx.segment(call.args[1])]
    if proj.bias is not None:
        args.append(f"bias={proj.bias}")
    return f"{api.FLCE_FUNCTION}({', '.join(args + ce_kwargs)})"


def _cross_entropy(ctx: PythonContext, call: ast.Call, functional: bool) -> Finding | None:
    if not call.args:
        return None
    proj = lm_head_projection(call.args[0], _enclosing_function(ctx, call), call.lineno, ctx.imports, ctx.source.text)
    if proj is None:
        return None
    message = (
        f"cross-entropy of {proj.label} materialises the (tokens x vocab) "
        f"logits; Liger-Kernel {V} fuses both in chunks: `{api.FUNCTIONAL}.{api.FLCE_FUNCTION}(hidden, weight, target)` "
        f"or `{api.TRANSFORMERS}.{api.FLCE_MODULE}()(weight, hidden, target)` (module form: weight FIRST)"
    )
    fixes = []
    text = _flce_text(ctx, call, proj) if functional else None
    if text is not None:
        fixes.append(Fix(
            title=f"Replace with {api.FLCE_FUNCTION}(hidden, {proj.weight}, target)",
            edits=(*_import(ctx, api.FUNCTIONAL, api.FLCE_FUNCTION), ctx.replace(call, text)),
            applicability=Applicability.UNSAFE,
        ))
    return ctx.finding(call, message, fixes)


# ---- Hugging Face models ----------------------------------------------------------------
def _liger_already_applied(ctx: PythonContext) -> bool:
    for node in ctx.module_nodes:
        if isinstance(node, ast.Call):
            path = ctx.imports.resolve(node.func) or ""
            if path.rsplit(".", 1)[-1] in api.LIGER_ENTRY_POINTS or path.split(".")[0] == "liger_kernel" and "apply" in path:
                return True
            if any(k.arg == "use_liger_kernel" and not _is_false(k.value) for k in node.keywords):
                return True
        if isinstance(node, ast.Attribute) and node.attr in api.LIGER_ENTRY_POINTS:
            return True
    return False


def _hf_class(ctx: PythonContext, node: ast.expr) -> str | None:
    path = ctx.imports.resolve(node) or ""
    if not path.startswith("transformers."):
        return None
    return path.rsplit(".", 1)[-1]


def _statement_of(ctx: PythonContext, node: ast.AST) -> ast.stmt | None:
    for anc in ctx.ancestors(node):
        if isinstance(anc, ast.stmt):
            return anc
    return None


def _model_build(ctx: PythonContext, call: ast.Call) -> Finding | None:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in BUILDERS:
        cls_node = func.value
    elif call.args or call.keywords:
        cls_node = func   # LlamaForCausalLM(config)
    else:
        return None
    cls = _hf_class(ctx, cls_node)
    if cls is None:
        return None
    if cls == "AutoModelForCausalLM" and cls_node is not func:
        message = (
            f"`AutoModelForCausalLM.{func.attr}` loads the model without Liger-Kernel: "
            f"`{api.TRANSFORMERS}.{api.AUTO_MODEL}.{func.attr}(...)` takes the same arguments and applies "
            f"the matching `apply_liger_kernel_to_<arch>` first"
        )
        fix = Fix(
            title=f"Use {api.AUTO_MODEL}",
            edits=(*_import(ctx, api.TRANSFORMERS, api.AUTO_MODEL), ctx.replace(cls_node, api.AUTO_MODEL)),
            applicability=Applicability.UNSAFE,
        )
        return ctx.finding(cls_node, message, [fix])
    if cls not in api.HF_CLASS_TO_APPLY:
        return None
    _, fn = api.HF_CLASS_TO_APPLY[cls]
    message = (
        f"`{cls}` is built without Liger-Kernel: call `{api.TRANSFORMERS}.{fn}()` before building it "
        f"(swaps in Liger's RMSNorm, MLP, RoPE and fused linear cross-entropy), or `{fn}(model=model)` / "
        f"`{api.TRANSFORMERS}.{api.APPLY_TO_INSTANCE}(model=model)` on a model already built"
    )
    fixes = []
    stmt = _statement_of(ctx, call)
    if stmt is not None:
        indent = " " * stmt.col_offset
        fixes.append(Fix(
            title=f"Call {fn}() before building the model",
            edits=(*_import(ctx, api.TRANSFORMERS, fn), Edit.insert(stmt.lineno, 0, f"{indent}{fn}()\n")),
            applicability=Applicability.UNSAFE,
        ))
    return ctx.finding(cls_node, message, fixes)


def _host_calls(ctx: PythonContext) -> Iterator[ast.Call]:
    """Every call outside Triton kernels (kernel bodies are not host code). Uses the context's
    shared call list and the kernels' line spans, so no second walk of the module is needed."""
    spans: list[tuple[int, int]] = []
    for start, end in sorted((k.node.lineno, k.node.end_lineno or k.node.lineno) for k in ctx.kernels):
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))   # a kernel nested in another
        else:
            spans.append((start, end))
    starts = [a for a, _ in spans]
    for call in ctx.module_calls:
        i = bisect_right(starts, call.lineno) - 1
        if i >= 0 and call.lineno <= spans[i][1]:
            continue
        yield call


def may_fire(text: str) -> bool:
    """The engine's pre-check (before parsing): False when this rule cannot report on the text."""
    return _mentions_host_api(text)


def _mentions_host_api(text: str) -> bool:
    """Cheap text test before any tree walk: a file of kernels only never needs one."""
    return any(word in text for word in ("RMSNorm", "LayerNorm", "GroupNorm", "cross_entropy", "CrossEntropyLoss",
                                         "transformers")) \
        or _mentions_loss(text)


def _mentions_loss(text: str) -> bool:
    """A preference/policy loss needs its formula's call (logsigmoid, log of sigmoid, torch.min)
    and token log-probs (`tl.min` in a kernel file is neither)."""
    return ("sigmoid" in text or "torch.min" in text) and ("log_softmax" in text or "logsumexp" in text)


# ---- preference and policy losses (liger_kernel.chunked_loss) -------------------------------
_FUSED = "computes the log-probs from the hidden states and the lm_head weight chunk by chunk, never materialising the (tokens x vocab) logits"
_LOSS_TEXT = {
    "dpo": "a hand-written DPO loss (logsigmoid of beta x the chosen-minus-rejected log-ratio margin)",
    "orpo": "a hand-written ORPO loss (logsigmoid of the log-odds ratio, log1p(-exp(logp)) terms)",
    "cpo_simpo": "a hand-written CPO/SimPO-style loss (logsigmoid of beta x the chosen-minus-rejected log-prob margin)",
    "grpo": ("a hand-written GRPO clipped policy loss (min(r * A, clamp(r, 1 - eps, 1 + eps) * A), r = exp(logp - old_logp), "
             "one advantage per sequence)"),
}


def _loss_message(kind: str) -> str:
    losses = api.CHUNKED_LOSSES
    if kind == "grpo":
        return (
            f"{_LOSS_TEXT[kind]}: Liger-Kernel {V} ships it fused: `{losses['grpo'].api}` (input FIRST; pick loss_type "
            f"to match your normalisation: 'grpo', 'bnpo', 'dr_grpo', 'dapo'; beta=0.0 without a reference model), which "
            f"{_FUSED}; or, from logits, `{api.GRPO_FROM_LOGITS_MODULE}.{api.GRPO_FROM_LOGITS_CALL}` (pass your "
            f"temperature and eps_high: the defaults are 0.9 and 0.4)"
        )
    if kind == "cpo_simpo":
        suggestion = f"`{losses['cpo'].api}` or, with a margin gamma on length-averaged log-probs, `{losses['simpo'].api}`"
    else:
        suggestion = f"`{losses[kind].api}`"
    return (
        f"{_LOSS_TEXT[kind]}: Liger-Kernel {V} ships it fused with the lm_head projection: {suggestion} (weight FIRST; "
        f"chosen then rejected rows concatenated along the batch), which {_FUSED}"
    )


class _LossScan:
    """Collects loss candidates and the token log-prob evidence during TRI023's one pass over
    the host calls; `findings` reports them only if the file takes log-probs from logits."""

    def __init__(self, ctx: PythonContext):
        self.ctx = ctx
        self.matches: list[LossMatch] = []
        self.evidence: set[str] = set()
        self._resolvers: dict[int, object] = {}

    def visit(self, call: ast.Call, path: str) -> None:
        ev = token_logp_evidence(call, self.ctx.imports)
        if ev == "both":
            self.evidence |= {"logp", "gather"}
        elif ev:
            self.evidence.add(ev)
        if path in LOSS_CALLS:
            match = preference_loss(call, self.ctx.imports, self._resolver(call))
        elif path in MIN_CALLS:
            match = policy_clip_loss(call, self.ctx.imports, self._resolver(call))
        else:
            return
        if match is not None:
            self.matches.append(match)

    def _resolver(self, call: ast.Call):
        """Name lookup in the call's function, built on first use (most torch.log calls are
        rejected without looking a name up) and then shared by the function's other calls."""
        def resolve(expr: ast.expr, line: int):
            fn = _enclosing_function(self.ctx, call)
            found = self._resolvers.get(id(fn))
            if found is None:
                nodes = self.ctx.module_nodes if fn is self.ctx.tree else self.ctx.walk(fn)
                found = self._resolvers[id(fn)] = local_resolver(nodes)
            return found(expr, line)
        return resolve

    def findings(self) -> Iterator[Finding]:
        if not {"logp", "gather"} <= self.evidence:
            return
        seen: set[tuple[int, str]] = set()
        for m in sorted(self.matches, key=lambda m: (m.node.lineno, m.node.col_offset)):
            key = (id(_enclosing_function(self.ctx, m.node)), m.kind)
            if key in seen:
                continue   # label smoothing writes logsigmoid(x) and logsigmoid(-x): one loss
            seen.add(key)
            yield self.ctx.finding(m.node, _loss_message(m.kind), [])


def _hf_module(ctx: PythonContext, call: ast.Call) -> Finding | None:
    """LlamaRMSNorm(...), LlamaMLP(config), apply_rotary_pos_emb(q, k, cos, sin) used directly."""
    path = ctx.imports.resolve(call.func) or ""
    if not path.startswith("transformers."):
        return None
    hf = path.rsplit(".", 1)[-1]
    if hf not in api.HF_MODULES:
        return None
    module, liger = api.HF_MODULES[hf]
    message = (
        f"`{hf}` has a Liger-Kernel {V} Triton replacement with the same arguments: `{module}.{liger}` "
        f"(what the `apply_liger_kernel_to_<arch>` functions swap in)"
    )
    fix = Fix(
        title=f"Use {liger}",
        edits=(*_import(ctx, module, liger), ctx.replace(call.func, liger)),
        applicability=Applicability.UNSAFE,
    )
    return ctx.finding(call.func, message, [fix])


def _fused_norm_in_other_branch(ctx: PythonContext, call: ast.Call) -> bool:
    """The torch norm is the fallback of an `if` whose other branch builds the project's own
    norm class (`if self.fuse_norm: GroupNorm(...) else: nn.GroupNorm(...)`): the fused
    kernel is already there, and the torch one is chosen on purpose."""
    child: ast.AST = call
    for parent in ctx.ancestors(call):
        if isinstance(parent, ast.If):
            other = parent.orelse if any(child is s for s in parent.body) else parent.body
            for stmt in other:
                for n in ast.walk(stmt):
                    if isinstance(n, ast.Call) and n is not call:
                        path = ctx.imports.resolve(n.func) or ""
                        name = path.rsplit(".", 1)[-1] if path else getattr(n.func, "id", getattr(n.func, "attr", ""))
                        if "Norm" in name and not path.startswith("torch."):
                            return True
            return False
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False
        child = parent
    return False


def check(ctx: PythonContext) -> Iterator[Finding]:
    if not _mentions_host_api(ctx.source.text) or not advice_wanted(ctx.source.path):
        return
    if imports_inference_engine(ctx.tree):
        return   # an inference engine's model code: Liger's training modules are not the fit
    references = reference_spans(ctx.module_nodes)
    loss_objects = cross_entropy_objects(ctx.tree, ctx.imports, ctx.module_nodes)
    check_models = not _liger_already_applied(ctx)
    norm_paths = RMS_PATHS | LN_PATHS
    losses = _LossScan(ctx)
    for node in _host_calls(ctx):
        path = ctx.imports.resolve(node.func) or ""
        losses.visit(node, path)
        finding = None
        if path in norm_paths and _normalises_several_dims(ctx, node):
            continue
        if (path in norm_paths or path in GN_PATHS) and _fused_norm_in_other_branch(ctx, node):
            continue
        if path in RMS_PATHS:
            finding = _rms_norm(ctx, node)
        elif path in LN_PATHS:
            finding = _layer_norm(ctx, node)
        elif path in GN_PATHS:
            finding = _group_norm(ctx, node)
        elif is_cross_entropy_call(node, ctx.imports, loss_objects):
            finding = _cross_entropy(ctx, node, functional=path == "torch.nn.functional.cross_entropy")
        elif check_models:
            finding = _model_build(ctx, node) or _hf_module(ctx, node)
        if finding is not None and not in_spans(finding.line, references):
            yield finding
    yield from (f for f in losses.findings() if not in_spans(f.line, references))
