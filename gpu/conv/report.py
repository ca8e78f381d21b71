"""Tables from the convolution benchmark's records (``gpu/conv/bench.py``'s conv.jsonl).

    python gpu/conv/report.py RECORDS.jsonl            # print the Markdown tables
    (gpu/templates/readme_table.py's ``conv_table`` puts them in the README from results/conv_h200/)

Ratios are baseline time / template time from the same record (the same run, the same timer: CUDA-graph
replay); above 1.00x the template is faster.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def _us(rec: dict | None, key: str = "graph_us") -> float | None:
    return (rec or {}).get(key)


def _ratio(base: dict | None, ours: dict | None, key: str = "graph_us") -> str:
    b, t = _us(base, key), _us(ours, key)
    return f"{b / t:.2f}x" if b and t else "-"


def _fmt(v: float | None) -> str:
    return f"{v:,.1f}" if v else "-"


WRONG_OUTPUT = 0.01  # max |y - y_float64| / max |y_float64| above this: the output was wrong (bf16 rounding is ~0.004)


def _config(text: str | None) -> dict:
    try:
        return eval(text or "{}", {"__builtins__": {}})  # noqa: S307 - a config dict bench.py wrote
    except SyntaxError:
        return {}


def _flag(rec: dict, which: str) -> str:
    """"‡" where the timed output was wrong, "†" where the chosen config is one the template no longer has
    (the input as boxes with the weight through its descriptor too: ``_CONV2D_BOX_WITH_WEIGHT_DESCRIPTOR``
    in kernels/templates/conv2d.py), "" otherwise."""
    err = rec.get("max_rel_err" if which == "plain" else "max_rel_err_fused")
    if isinstance(err, (int, float)) and err > WRONG_OUTPUT:
        return "‡"
    config = _config(rec.get(f"best_{which}"))
    if config.get("A_BOX") and config.get("USE_TMA") and config.get("num_warps", 8) == 8:
        return "†"
    return ""


def env_line(recs: list[dict]) -> str:
    env = next((r for r in recs if r.get("kind") == "env"), {})
    return (f"{env.get('gpu', 'GPU?')}, device clock {env.get('date', '?')}, torch {env.get('torch')}, "
            f"triton {env.get('triton')}, cuDNN {env.get('cudnn')}")


def _layer(name: str, shapes) -> str:
    for s in shapes:
        if s[0] == name:
            _, hw, c_in, c_out, k, stride = s
            return f"{name} ({hw}, {c_in}->{c_out}, {k}x{k}/{stride})"
    return name


def _carried(rec: dict) -> str:
    """"§" on a row this run did not reach, taken from an earlier run's records (``carried_from``)."""
    return "§" if rec.get("carried_from") else ""


def tables(recs: list[dict], shapes) -> str:
    fwd = [r for r in recs if r.get("kind") == "fwd"]
    out = ["**conv2d forward** (bf16, NHWC; cuDNN through `F.conv2d` on the channels-last views, "
           "`cudnn.benchmark` on; fused = `silu(conv + bias + residual)` in the template's epilogue against "
           "cuDNN's conv with bias followed by the separate add and SiLU ops):", "",
           "| layer (H=W, C_in->C_out, k/stride) | batch | template us | cuDNN us | vs cuDNN | fused us | "
           "cuDNN + add + SiLU us | fused vs separate |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    flagged = set()
    for r in fwd:
        fp, ff = _flag(r, "plain"), _flag(r, "fused")
        flagged |= {fp, ff} - {""}
        out.append(f"| {_layer(r['shape'], shapes)}{_carried(r)} | {r['batch']} | {_fmt(_us(r.get('template')))}{fp} | "
                   f"{_fmt(_us(r.get('cudnn')))} | {_ratio(r.get('cudnn'), r.get('template'))}{fp} | "
                   f"{_fmt(_us(r.get('template_fused')))}{ff} | {_fmt(_us(r.get('cudnn_epilogue')))} | "
                   f"{_ratio(r.get('cudnn_epilogue'), r.get('template_fused'))}{ff} |")
    gemm = [r for r in fwd if r.get("gemm_only")]
    if gemm:
        out += ["", "**1x1 layers: the GEMM kernel against the implicit GEMM** (each path forced, the same record; "
                "path: the one the template chose for the layer by timing both on its first call; torch.mm: cuBLAS "
                "on the same [pixels, C_in] x [C_in, C_out] matrices, at stride 2 on a copy of the pixels read, "
                "the copy not timed):", "",
                "| layer | batch | path (plain / fused) | GEMM kernel us | implicit GEMM us | cuDNN us | torch.mm us | "
                "GEMM vs cuDNN |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in gemm:
            out.append(f"| {_layer(r['shape'], shapes)} | {r['batch']} | {r.get('path_plain')} / {r.get('path_fused')} | "
                       f"{_fmt(_us(r.get('gemm_only')))} | {_fmt(_us(r.get('implicit_only')))} | "
                       f"{_fmt(_us(r.get('cudnn')))} | {_fmt(_us(r.get('torch_mm')))} | "
                       f"{_ratio(r.get('cudnn'), r.get('gemm_only'))} |")
    if "‡" in flagged:
        out += ["", f"‡ the timed config's output was wrong (max relative error over {WRONG_OUTPUT} against float64): "
                "the figure does not count."]
    if "†" in flagged:
        out += ["", "† timed with a config the template no longer has (its input as boxes with the weight "
                "through its descriptor too, at 8 warps: see `_CONV2D_BOX_WITH_WEIGHT_DESCRIPTOR`); the template as committed "
                "runs another config there, not timed in this run."]
    c1 = [r for r in recs if r.get("kind") == "conv1d"]
    if c1:
        out += ["", "**depthwise causal conv1d + SiLU** (bf16, NLC, width 4; baseline `F.conv1d` with "
                "groups = channels (cuDNN) + `F.silu`):", "",
                "| batch x seqlen x channels | fwd us | vs F.conv1d | fwd+bwd us | vs F.conv1d |", "| --- | --- | --- | --- | --- |"]
        for r in c1:
            out.append(f"| {'x'.join(map(str, r['shape']))}{_carried(r)} | {_fmt(_us(r.get('template_fwd')))} | "
                       f"{_ratio(r.get('cudnn_fwd'), r.get('template_fwd'))} | {_fmt(_us(r.get('template_fwd_bwd')))} | "
                       f"{_ratio(r.get('cudnn_fwd_bwd'), r.get('template_fwd_bwd'))} |")
    tr = [r for r in recs if r.get("kind") == "train"]
    if tr:
        out += ["", "**conv2d + bias + residual + SiLU, forward + dgrad + wgrad** (`torch.autograd.grad` of all "
                "four inputs; eager = cuDNN + separate ops; compile = `torch.compile` of the same function; "
                "forward: which the template's forward chose for the layer, its own kernels or cuDNN's conv followed by "
                "its epilogue kernel, whichever its first call timed faster (records before that choice existed: the "
                "template's kernels); dgrad / wgrad: which the template's backward chose for the layer, the template's "
                "kernel or cuDNN's (`aten.convolution_backward`), whichever its first backward timed faster; each "
                "with each one's time alone, template / cuDNN):", "",
                "| layer | batch | template us | vs eager | vs compile | forward: chosen (template / cuDNN + epilogue us) | "
                "dgrad: chosen (template / cuDNN us) | wgrad: chosen (template / cuDNN us) |",
                "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in tr:
            choice, parts = r.get("backward_choice") or ["-", "-"], r.get("parts_us") or {}

            def pick(i, what):
                t, c = parts.get(f"{what}_template"), parts.get(f"{what}_cudnn")
                return f"{choice[i]} ({_fmt(t)} / {_fmt(c)})" if t or c else choice[i]

            fwd, fwd_t, fwd_c = r.get("forward_choice") or "template", parts.get("fwd_keep_z"), parts.get("fwd_cudnn_keep_z")
            fwd = f"{fwd} ({_fmt(fwd_t)} / {_fmt(fwd_c)})" if fwd_t or fwd_c else fwd

            out.append(f"| {_layer(r['shape'], shapes)}{_carried(r)} | {r['batch']} | {_fmt(_us(r.get('template')))} | "
                       f"{_ratio(r.get('eager'), r.get('template'))} | {_ratio(r.get('compile'), r.get('template'))} | "
                       f"{fwd} | {pick(0, 'dgrad')} | {pick(1, 'wgrad')} |")
    carried = sorted({r["carried_from"] for r in recs if r.get("carried_from")})
    if carried:
        out += ["", "§ not reached by this run: the record of the run of " + ", ".join(carried)
                + " (the same scripts; results/conv_h200.md says what changed since in the code those rows run)."]
    errors = [r for r in recs if r.get("kind") == "error"]
    if errors:
        out += ["", f"{len(errors)} case(s) failed in this run: " + "; ".join(
            f"{e.get('section')} {e.get('shape')} {e.get('batch', '')}: {e.get('error', '')[:80]}" for e in errors[:6])]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench import SHAPES

    recs = load(Path(argv[0]))
    print(env_line(recs))
    print(tables(recs, SHAPES))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
