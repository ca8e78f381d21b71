"""Kernel templates that quick fixes insert: each a module a user would keep.

Every template module holds the Triton kernel(s), the launcher with its autotune configurations,
the ``torch.autograd.Function`` where there is a backward, the PyTorch reference and a benchmark
contract for ``tritonify bench``. This package lists them *statically* (nothing here imports torch
or triton, so the language server can offer templates without a 2-second import) and renders a
module's text with its placeholders filled in, as plain text or as an LSP snippet. `insert.py`
(the one module here that is not a template) computes the edits that insert one into a file.

Placeholders:
  name      the identifier prefix every name of the template carries (``rms_norm`` ->
            ``rms_norm``, ``_rms_norm_fwd_kernel``, ``RMS_NORM_HIDDEN``, ``RMSNormFunction``);
            attribute accesses (``torch.softmax``) and strings other than the contract's are untouched.
  hidden    the size the contract benchmarks (hidden size, vocabulary, ...), a module constant.
  dtype     the contract's dtype name, a module constant.
"""
from __future__ import annotations

import io
import keyword
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
DTYPES = ("bfloat16", "float16", "float32")


@dataclass(frozen=True)
class Template:
    """One template module.

    ``prefix`` is the snake-case stem shared by the module's names; ``class_prefix`` the CamelCase
    stem of its classes; ``constants`` maps a placeholder key to the module constant holding it
    (its value in the source is the default)."""

    name: str
    title: str
    ops: list[str]
    module: str
    prefix: str
    class_prefix: str
    constants: dict[str, str] = field(default_factory=dict)
    description: str = ""

    @property
    def path(self) -> Path:
        return HERE / f"{self.module}.py"

    def source(self) -> str:
        """The module's source text, as it is on disk."""
        return self.path.read_text(encoding="utf-8")

    def defaults(self) -> dict[str, str]:
        """Placeholder key -> the value the source holds (``name`` is the prefix)."""
        values = {"name": self.prefix}
        for key, constant in self.constants.items():
            match = re.search(rf"^{constant}\s*=\s*(.+?)\s*$", self.source(), re.MULTILINE)
            values[key] = match.group(1).strip("\"'") if match else ""
        return values

    def render(self, **placeholders: str) -> str:
        """The module's text with placeholders replaced by plain values."""
        return _render(self, _values(self, placeholders), snippet=False)

    def snippet(self, **placeholders: str) -> str:
        """The module's text as an LSP snippet: ``${1:name}`` for the name (mirrored everywhere it
        appears, upper-cased for constants and Pascal-cased for classes by snippet transforms),
        then one tab stop per constant; ``placeholders`` change the defaults."""
        return _render(self, _values(self, placeholders), snippet=True)


def _values(template: Template, placeholders: dict[str, str]) -> dict[str, str]:
    values = template.defaults()
    unknown = set(placeholders) - set(values)
    if unknown:
        raise KeyError(f"template {template.name}: unknown placeholder(s) {sorted(unknown)}; known: {sorted(values)}")
    values.update({k: str(v) for k, v in placeholders.items()})
    name = values["name"]
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"template {template.name}: name {name!r} is not a Python identifier")
    if "dtype" in values and values["dtype"] not in DTYPES:
        raise ValueError(f"template {template.name}: dtype {values['dtype']!r} is not one of {', '.join(DTYPES)}")
    for key in template.constants:
        if key != "dtype" and not values[key].isdigit():
            raise ValueError(f"template {template.name}: {key} {values[key]!r} is not a positive integer")
    return values


def snippet_escape(text: str) -> str:
    """Literal text inside an LSP snippet: backslash, dollar and closing brace are escaped."""
    return text.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def _replacements(template: Template, values: dict[str, str], snippet: bool):
    """(start, end, text) spans, as (row, col) token positions, for every placeholder occurrence."""
    prefix, upper, cls = template.prefix, template.prefix.upper(), template.class_prefix
    name = values["name"]
    renamed = snippet or name != prefix
    stops = {key: i for i, key in enumerate(template.constants, start=2)}
    constant_keys = {constant: key for key, constant in template.constants.items()}
    first_name = True

    def name_text() -> str:
        nonlocal first_name
        if not snippet:
            return name
        text, first_name = ("${1:" + snippet_escape(name) + "}" if first_name else "$1"), False
        return text

    tokens = list(tokenize.generate_tokens(io.StringIO(template.source()).readline))
    spans = []
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        if tok.type == tokenize.NAME and renamed and not (prev and prev.string == "."):
            s = tok.string
            lead = "_" if s.startswith("_") else ""
            core = s[len(lead):]
            if core == prefix or core.startswith(prefix + "_"):
                spans.append((tok.start, tok.end, lead + name_text() + snippet_escape(core[len(prefix):])))
            elif core == upper or core.startswith(upper + "_"):
                text = ("${1/(.*)/${1:/upcase}/}" if snippet else name.upper())
                spans.append((tok.start, tok.end, lead + text + core[len(upper):]))
            elif cls and core.startswith(cls) and core[len(cls):len(cls) + 1].isupper():
                text = ("${1/(.*)/${1:/pascalcase}/}" if snippet else _pascal(name))
                spans.append((tok.start, tok.end, lead + text + core[len(cls):]))
        elif tok.type in (tokenize.NUMBER, tokenize.STRING) and i >= 2 and tokens[i - 1].string == "=":
            owner = tokens[i - 2].string
            if owner in constant_keys:
                key = constant_keys[owner]
                value = values[key]
                quote = '"' if tok.type == tokenize.STRING else ""
                if snippet:
                    if key == "dtype":
                        choices = [value] + [d for d in DTYPES if d != value]
                        inner = "${" + f"{stops[key]}|{','.join(choices)}|" + "}"
                    else:
                        inner = "${" + f"{stops[key]}:{snippet_escape(value)}" + "}"
                else:
                    inner = value
                spans.append((tok.start, tok.end, quote + inner + quote))
            elif owner in ("kernel", "name") and renamed and tok.type == tokenize.STRING:
                literal = tok.string.strip("\"'")
                lead = "_" if literal.startswith("_") else ""
                core = literal[len(lead):]
                if core == prefix or core.startswith(prefix + "_"):
                    spans.append((tok.start, tok.end, '"' + lead + name_text() + snippet_escape(core[len(prefix):]) + '"'))
    return spans


def _render(template: Template, values: dict[str, str], snippet: bool) -> str:
    lines = template.source().splitlines(keepends=True)
    by_row: dict[int, list] = {}
    for start, end, text in _replacements(template, values, snippet):
        by_row.setdefault(start[0], []).append((start[1], end[1], text))
    out = []
    for row, line in enumerate(lines, start=1):
        spans = sorted(by_row.get(row, []))
        pieces, col = [], 0
        for a, b, text in spans:
            piece = line[col:a]
            pieces.append(snippet_escape(piece) if snippet else piece)
            pieces.append(text)
            col = b
        rest = line[col:]
        pieces.append(snippet_escape(rest) if snippet else rest)
        out.append("".join(pieces))
    return "".join(out)


_TEMPLATES = (
    Template("rms_norm", "Fused RMSNorm (forward + backward)", ["rms_norm"], "rms_norm", "rms_norm", "RMSNorm",
             {"hidden": "RMS_NORM_HIDDEN", "dtype": "RMS_NORM_DTYPE"},
             "y = x * rsqrt(mean(x^2) + eps) * weight; fp32 statistics, multi-row forward, dweight by partial sums"),
    Template("add_rms_norm", "Fused residual add + RMSNorm", ["fused_add_rms_norm"], "add_rms_norm",
             "add_rms_norm", "AddRMSNorm", {"hidden": "ADD_RMS_NORM_HIDDEN", "dtype": "ADD_RMS_NORM_DTYPE"},
             "(rms_norm(x + residual), x + residual) in one pass; the backward adds the residual gradient"),
    Template("swiglu", "Fused SwiGLU (forward + backward)", ["swiglu"], "swiglu", "swiglu", "SwiGLU",
             {"hidden": "SWIGLU_HIDDEN", "dtype": "SWIGLU_DTYPE"}, "silu(gate) * up, element-wise"),
    Template("cross_entropy", "Fused cross-entropy (online softmax, in-place gradient)", ["cross_entropy"],
             "cross_entropy", "cross_entropy", "CrossEntropy",
             {"hidden": "CROSS_ENTROPY_VOCAB", "dtype": "CROSS_ENTROPY_DTYPE"},
             "label smoothing, ignore_index, mean/sum; the gradient overwrites the logits"),
    Template("fused_linear_cross_entropy", "Chunked fused linear + cross-entropy (large vocabularies)",
             ["fused_linear_cross_entropy"], "fused_linear_cross_entropy",
             "fused_linear_cross_entropy", "FusedLinearCrossEntropy",
             {"hidden": "FUSED_LINEAR_CROSS_ENTROPY_HIDDEN", "vocab": "FUSED_LINEAR_CROSS_ENTROPY_VOCAB",
              "dtype": "FUSED_LINEAR_CROSS_ENTROPY_DTYPE"},
             "lm_head matmul + loss per chunk of tokens; never materialises (tokens, vocab) logits"),
    Template("softmax", "Fused softmax (forward + backward)", ["softmax"], "softmax", "softmax", "Softmax",
             {"hidden": "SOFTMAX_COLS", "dtype": "SOFTMAX_DTYPE"},
             "rows in registers up to 32K wide, online softmax beyond"),
    Template("linear_gelu", "Linear + GELU (cuBLAS matmul, one Triton GELU pass; z kept for the backward)", ["linear_gelu"],
             "linear_gelu", "linear_gelu", "LinearGELU",
             {"hidden": "LINEAR_GELU_IN_FEATURES", "out_features": "LINEAR_GELU_OUT_FEATURES",
              "dtype": "LINEAR_GELU_DTYPE"},
             "gelu_tanh(x @ W.T + b): addmm with the bias, the GELU in place; backward dz = dy * gelu'(z) in one pass"),
    Template("tanh_glu", "Fused tanh-GLU with the fast tanh (forward + backward)", ["tanh_glu"], "tanh_glu",
             "tanh_glu", "TanhGLU", {"hidden": "TANH_GLU_HIDDEN", "dtype": "TANH_GLU_DTYPE"},
             "tanh(gate) * up; PTX tanh.approx for bf16/fp16 on GPU, the sigmoid identity elsewhere"),
    Template("relu2_glu", "Fused ReLU^2-GLU (forward + backward)", ["relu_squared"], "relu2_glu",
             "relu2_glu", "ReLU2GLU", {"hidden": "RELU2_GLU_HIDDEN", "dtype": "RELU2_GLU_DTYPE"},
             "relu(gate)^2 * up"),
    Template("geglu_sigmoid", "Fused GeGLU, sigmoid GELU approximation (forward + backward)", ["geglu"],
             "geglu_sigmoid", "geglu_sigmoid", "GeGLUSigmoid",
             {"hidden": "GEGLU_SIGMOID_HIDDEN", "dtype": "GEGLU_SIGMOID_DTYPE"},
             "gate * sigmoid(1.702 gate) * up (a different function from the tanh/erf GELU)"),
    Template("conv2d", "Conv2d, NHWC implicit GEMM (bias, residual, SiLU fused; dgrad and wgrad)", ["conv2d"],
             "conv2d", "conv2d", "Conv2d", {"channels": "CONV2D_CHANNELS", "dtype": "CONV2D_DTYPE"},
             "act(conv2d(x, w) + bias + residual) on tl.dot; dgrad by stride-phase subproblems, wgrad as dz^T im2col(x)"),
    Template("causal_conv1d", "Depthwise causal conv1d, NLC (the Mamba short conv; SiLU fused, forward + backward)",
             ["causal_conv1d"], "causal_conv1d", "causal_conv1d", "CausalConv1d",
             {"channels": "CAUSAL_CONV1D_CHANNELS", "dtype": "CAUSAL_CONV1D_DTYPE"},
             "silu(bias + sum_k w[c, k] x[t - 3 + k, c]) over [batch, seqlen, channels]; width up to 4"),
    Template("moe", "Fused mixture-of-experts MLP (top-k router, grouped GEMMs, forward + backward)", ["moe"],
             "moe", "moe", "MoE",
             {"hidden": "MOE_HIDDEN", "intermediate": "MOE_INTERMEDIATE", "experts": "MOE_EXPERTS",
              "top_k": "MOE_TOP_K", "dtype": "MOE_DTYPE"},
             "max-shifted softmax/sigmoid top-k router, tokens sorted by expert, gate+up GEMM with the GLU in "
             "registers, down GEMM with the routing weight on the way out"),
)


def list_templates() -> list[Template]:
    """Every template, in a stable order (what ``tritonify template --list`` prints)."""
    return list(_TEMPLATES)


def get_template(name: str) -> Template:
    """The template called ``name``; KeyError with the known names otherwise."""
    for template in _TEMPLATES:
        if template.name == name:
            return template
    raise KeyError(f"no template {name!r}; known: {', '.join(t.name for t in _TEMPLATES)}")
