"""Every liger-kernel name and signature the TRI003/TRI023 tables print exists in the installed
liger-kernel (0.8.5, the `gpu` extra), so a message never tells a user to call something that
is not there.

Names importable without `transformers` are checked by importing their module and reading
`vars(module)`: `liger_kernel.transformers.__getattr__` raises ImportError (not AttributeError)
for unknown names when transformers is missing, so `hasattr`/`getattr` would blow up instead of
answering. The monkey-patch functions need transformers at import time, so they are checked by
parsing the installed source files instead.
"""
import ast
import importlib
import importlib.util
import inspect
import re
from pathlib import Path

import pytest
from tritonify.diagnostics.liger import api

liger_kernel = pytest.importorskip("liger_kernel")
pytest.importorskip("packaging")   # liger-kernel 0.8.5 imports it without declaring it
pytest.importorskip("torch")
pytest.importorskip("triton")

PACKAGE = Path(liger_kernel.__file__).resolve().parent


def _module(name: str):
    return importlib.import_module(name)


def _object(module: str, name: str):
    namespace = vars(_module(module))
    assert name in namespace, f"{module}.{name} does not exist in the installed liger-kernel"
    return namespace[name]


def _parse_call(text: str) -> tuple[str, list[str], dict[str, object]]:
    """'f(a, b, eps=1e-6)' -> ('f', ['a', 'b'], {'eps': 1e-6}); '()(w, x)' forms keep the outer call."""
    call = ast.parse(text, mode="eval").body
    assert isinstance(call, ast.Call)
    name = call.func.func.id if isinstance(call.func, ast.Call) else call.func.id
    args = [a.id for a in call.args]
    kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    return name, args, kwargs


def _check_signature(fn, args: list[str], kwargs: dict[str, object], where: str) -> None:
    params = list(inspect.signature(fn).parameters.values())
    params = [p for p in params if p.name != "self"]
    assert [p.name for p in params[:len(args)]] == args, f"{where}: leading parameters are {[p.name for p in params[:len(args) + 2]]}"
    by_name = {p.name: p for p in params}
    for k, v in kwargs.items():
        assert k in by_name, f"{where}: no parameter {k}"
        assert by_name[k].default == v, f"{where}: {k} defaults to {by_name[k].default!r}, not {v!r}"


def test_installed_version_is_the_one_the_tables_describe():
    from importlib.metadata import version

    assert version("liger-kernel") == api.LIGER_VERSION


def referenced_names() -> list[tuple[str, str]]:
    """(module, name) for every name the rules put in a message or a fix (those that need
    transformers at import time are `api.LIGER_ENTRY_POINTS`, checked from the source below)."""
    names = {(op.module_path, op.module_class) for op in api.OPS.values()}
    names |= {(op.functional_path, op.functional) for op in api.OPS.values()}
    names |= {(api.TRANSFORMERS, api.RMS_NORM_MODULE), (api.TRANSFORMERS, api.LAYER_NORM_MODULE),
              (api.TRANSFORMERS, api.FLCE_MODULE), (api.FUNCTIONAL, api.FLCE_FUNCTION)}
    return sorted(names)


@pytest.mark.parametrize("module,name", referenced_names(), ids=lambda x: x)
def test_referenced_name_exists(module, name):
    assert callable(_object(module, name))


@pytest.mark.parametrize("op", list(api.OPS.values()), ids=lambda op: op.key)
def test_op_signatures_match(op):
    name, args, kwargs = _parse_call(op.functional_call)
    assert name == op.functional
    _check_signature(_object(op.functional_path, name), args, kwargs, op.functional_api)

    name, args, kwargs = _parse_call(op.module_call)
    assert name == op.module_class
    target = _object(op.module_path, name)
    if inspect.isclass(target):
        if op.module_call.startswith(f"{name}()("):
            _check_signature(target.forward, args, kwargs, f"{op.module_api}.forward")
        else:
            _check_signature(target.__init__, args, kwargs, op.module_api)
    else:
        _check_signature(target, args, kwargs, op.module_api)

    # the helper the TRI003 fix writes calls the functional with keywords it accepts
    call = ast.parse(op.helper_body, mode="eval").body
    params = inspect.signature(_object(op.functional_path, op.functional)).parameters
    assert call.func.id == op.functional
    assert len(call.args) <= len(params)
    assert all(k.arg in params for k in call.keywords)


def test_host_replacements_and_their_traps():
    rms = _object(api.TRANSFORMERS, api.RMS_NORM_MODULE)
    _check_signature(rms.__init__, ["hidden_size"], {"eps": 1e-6, "elementwise_affine": True}, "LigerRMSNorm")
    ln = _object(api.TRANSFORMERS, api.LAYER_NORM_MODULE)
    _check_signature(ln.__init__, ["hidden_size"], {"eps": 1e-6, "bias": False}, "LigerLayerNorm")
    flce = _object(api.TRANSFORMERS, api.FLCE_MODULE)
    _check_signature(flce.forward, ["lin_weight", "_input", "target"], {"bias": None}, "LigerFusedLinearCrossEntropyLoss.forward")
    fn = _object(api.FUNCTIONAL, api.FLCE_FUNCTION)
    _check_signature(fn, ["input", "weight", "target"], {"bias": None, "ce_weight": None, "ignore_index": -100,
                                                          "reduction": "mean", "label_smoothing": 0.0}, api.FLCE_FUNCTION)


# ---- names that need transformers: read the installed source -----------------------------------
def _tree(relative: str) -> tuple[str, ast.Module]:
    text = (PACKAGE / relative).read_text(encoding="utf-8")
    return text, ast.parse(text)


def test_apply_functions_exist_and_there_are_45():
    _, tree = _tree("transformers/monkey_patch.py")
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert len(api.APPLY_FUNCTIONS) == 45
    assert set(api.APPLY_FUNCTIONS) == {n for n in defined if n.startswith("apply_liger_kernel_to_")}
    assert api.APPLY_TO_INSTANCE in defined
    assert "monkey_patch" not in defined          # the trap: there is no monkey_patch(model)


def test_each_apply_function_takes_model_and_patches_the_classes_we_name():
    text, tree = _tree("transformers/monkey_patch.py")
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    mapping = next(n.value for n in tree.body if isinstance(n, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == "MODEL_TYPE_TO_APPLY_LIGER_FN" for t in n.targets))
    registry = {k.value: v.id for k, v in zip(mapping.keys, mapping.values)}
    for model_type, (fn, classes) in api.HF_MODELS.items():
        assert registry.get(model_type) == fn, model_type
        node = functions[fn]
        assert "model" in [a.arg for a in node.args.args + node.args.kwonlyargs], fn
        body = ast.get_source_segment(text, node)
        for cls in classes:
            assert re.search(rf"\b{cls}\b", body), f"{fn} does not mention {cls}"


def test_lazy_exports_of_liger_kernel_transformers():
    _, tree = _tree("transformers/__init__.py")
    getattr_fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "__getattr__")
    lazy = {c.value for c in ast.walk(getattr_fn) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    for name in sorted(api.LIGER_ENTRY_POINTS):   # exported lazily: they need transformers
        if name == "_apply_liger_kernel":
            continue
        assert name in lazy, f"liger_kernel.transformers does not export {name}"
    _, auto = _tree("transformers/auto_model.py")
    cls = next(n for n in auto.body if isinstance(n, ast.ClassDef) and n.name == api.AUTO_MODEL)
    assert {"from_pretrained", "from_config"} <= {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}


def test_getattr_trap_is_real_without_transformers():
    """The reason this file uses vars(): without transformers, an unknown name raises ImportError."""
    if importlib.util.find_spec("transformers") is not None:
        pytest.skip("transformers is installed: the lazy names resolve normally")
    module = _module(api.TRANSFORMERS)
    with pytest.raises(ImportError):
        getattr(module, "apply_liger_kernel_to_llama")  # noqa: B009 - the point is what getattr raises


@pytest.mark.parametrize("hf", sorted(api.HF_MODULES), ids=lambda x: x)
def test_hf_module_replacements_are_what_the_apply_functions_swap_in(hf):
    module, liger = api.HF_MODULES[hf]
    assert callable(_object(module, liger))
    text, _ = _tree("transformers/monkey_patch.py")
    assert re.search(rf"modeling_\w+\.{hf} = {liger}\b", text), f"monkey_patch.py never sets {hf} = {liger}"


@pytest.mark.parametrize("kind", sorted(api.CHUNKED_LOSSES), ids=lambda x: x)
def test_chunked_losses_exist_with_the_defaults_and_argument_order_we_print(kind):
    loss = api.CHUNKED_LOSSES[kind]
    cls = _object(api.CHUNKED_LOSS, loss.name)
    name, args, kwargs = _parse_call(loss.constructor)
    assert name == loss.name
    _check_signature(cls.__init__, args, kwargs, loss.constructor)
    _, fargs, fkwargs = _parse_call(f"f({loss.forward})")
    fkwargs = {k: v for k, v in fkwargs.items()}
    _check_signature(cls.forward, fargs, fkwargs, f"{loss.name}.forward")


def test_grpo_from_logits_signature_and_the_defaults_the_message_warns_about():
    fn = _object(api.GRPO_FROM_LOGITS_MODULE, api.GRPO_FROM_LOGITS)
    name, args, kwargs = _parse_call(api.GRPO_FROM_LOGITS_CALL)
    assert name == api.GRPO_FROM_LOGITS
    _check_signature(fn, args, kwargs, api.GRPO_FROM_LOGITS_CALL)
    assert kwargs["temperature"] == 0.9 and kwargs["eps_high"] == 0.4


def test_group_norm_replacement_and_its_repr_trap():
    """TRI023 swaps nn.GroupNorm(groups, channels) for LigerGroupNorm(channels, groups) and warns
    that printing it fails; when liger fixes extra_repr this test says the warning can go."""
    cls = _object(api.GROUP_NORM_MODULE_PATH, api.GROUP_NORM_MODULE)
    _check_signature(cls.__init__, ["num_channels", "num_groups"], {"eps": 1e-6}, api.GROUP_NORM_MODULE)
    module = cls(4, 2)
    assert {n for n, _ in module.named_parameters()} == {"weight", "bias"}
    with pytest.raises(AttributeError):
        repr(module)
