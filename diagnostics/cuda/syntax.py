"""Small facts about CUDA syntax trees (tree-sitter-cuda) that several rules need.

* `classify_number(text)`: what a numeric literal is (a double constant, a float, an int ...),
  read the way the C++ lexer reads it: a floating literal without suffix is `double`.
* `is_device_code(node)`: is the node inside a `__global__`/`__device__` function or a
  `__device__` lambda? Host code is left alone: FP64 on the CPU is not the problem these
  rules are about.
* `callee_name(call)`: `exp` for `exp(x)`, `std::exp(x)`, `::exp(x)` and `cuda::std::exp(x)`.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Iterator

FLT_MAX = 3.4028234663852886e38
FLT_MIN = 1.1754943508222875e-38   # smallest normal float

ARITHMETIC_OPS = {"+", "-", "*", "/"}
COMPARISON_OPS = {"<", ">", "<=", ">=", "==", "!="}
COMPOUND_ARITHMETIC_OPS = {"+=", "-=", "*=", "/="}


@dataclass(frozen=True)
class NumberLiteral:
    kind: str            # "double", "float", "long double", "int"
    value: float | None  # the value for floating literals


def classify_number(text: str) -> NumberLiteral:
    """Classify a C++ numeric literal's text (`0.5`, `1e-5`, `.5f`, `0x1.8p1`, `1'000.0`, `-2.0`)."""
    t = text.replace("'", "").strip().lstrip("+-")
    lower = t.lower()
    if lower.startswith("0x"):
        if "p" not in lower:
            return NumberLiteral("int", None)
        mantissa, _, exponent = lower.partition("p")
        suffix = ""
        while exponent and exponent[-1] in "fl":
            suffix = exponent[-1] + suffix
            exponent = exponent[:-1]
        try:
            value = float.fromhex(f"{mantissa}p{exponent}")
        except ValueError:
            return NumberLiteral("int", None)
        return _floating(suffix, value)
    if lower.startswith("0b") or not any(c in lower for c in ".e"):
        return NumberLiteral("int", None)
    suffix = ""
    body = lower
    while body and body[-1] in "fl":
        suffix = body[-1] + suffix
        body = body[:-1]
    try:
        value = float(body)
    except ValueError:
        return NumberLiteral("int", None)
    return _floating(suffix, value)


def _floating(suffix: str, value: float) -> NumberLiteral:
    if suffix == "f":
        return NumberLiteral("float", value)
    if suffix == "l":
        return NumberLiteral("long double", value)
    if suffix == "":
        return NumberLiteral("double", value)
    return NumberLiteral("int", None)  # not a valid floating suffix: leave it alone


def exact_in_float(value: float) -> bool:
    """Is the double constant exactly a float? Then nvcc can fold one float op with it back to FP32."""
    if not math.isfinite(value) or abs(value) > FLT_MAX:
        return False
    return struct.unpack("f", struct.pack("f", value))[0] == value


def float_suffix_is_safe(value: float) -> bool:
    """Adding `f` keeps the value a normal float (no overflow to inf, no denormal or flush to 0)."""
    return value == 0.0 or FLT_MIN <= abs(value) <= FLT_MAX


# ---- tree helpers -------------------------------------------------------------------------------

def text_of(node) -> str:
    return node.text.decode("utf-8", errors="replace") if node is not None else ""


def walk(node) -> Iterator:
    """Every node below `node` (inclusive), depth first, without recursion."""
    cursor = node.walk()
    visited_children = False
    while True:
        if not visited_children:
            yield cursor.node
            if cursor.goto_first_child():
                continue
        if cursor.goto_next_sibling():
            visited_children = False
            continue
        if not cursor.goto_parent() or cursor.node == node:
            return
        visited_children = True


# Real kernels nest a few dozen levels; the rules walk up to the enclosing function from each
# node, which costs depth x nodes, so a pathological file (20,000 nested braces) is not analysed.
MAX_DEPTH = 500


class TooDeeplyNested(ValueError):
    """The CUDA text nests deeper than `MAX_DEPTH`: it is not analysed."""


def max_depth(node, limit: int = MAX_DEPTH) -> int:
    """How deep the tree below `node` nests, counted up to `limit + 1` (one cursor walk, no
    recursion, stopping as soon as the limit is passed)."""
    cursor = node.walk()
    depth = deepest = 0
    while True:
        if cursor.goto_first_child():
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            continue
        while not cursor.goto_next_sibling():
            if depth == 0 or not cursor.goto_parent():
                return deepest
            depth -= 1


def unwrap_parentheses(node):
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def operator_of(node) -> str:
    op = node.child_by_field_name("operator")
    return text_of(op) if op is not None else ""


def is_device_function(fn) -> bool:
    """A function_definition marked `__global__` or `__device__` (also `__host__ __device__`)."""
    return any(child.type in ("__global__", "__device__") for child in fn.children)


def is_device_lambda(node) -> bool:
    """`[] __device__ (float x) {...}`: tree-sitter-cuda keeps `__device__` in an ERROR child."""
    for child in node.children:
        if child.type == "ERROR" and "__device__" in text_of(child):
            return True
        if child.type in ("__device__", "__global__"):
            return True
    return False


def enclosing_function(node):
    """The innermost function_definition or lambda_expression around a node, or None."""
    p = node.parent
    while p is not None:
        if p.type in ("function_definition", "lambda_expression"):
            return p
        p = p.parent
    return None


def is_device_code(node) -> bool:
    fn = enclosing_function(node)
    while fn is not None:
        if fn.type == "function_definition":
            return is_device_function(fn)
        if is_device_lambda(fn):
            return True
        fn = enclosing_function(fn)
    return False


def callee_name(call) -> str | None:
    """The plain name a call_expression calls (`exp` for `exp`, `std::exp`, `::exp`,
    `cuda::std::exp`), or None for anything else (members, other namespaces, templates)."""
    fn = call.child_by_field_name("function")
    if fn is None:
        return None
    if fn.type == "identifier":
        return text_of(fn)
    if fn.type == "qualified_identifier":
        parts = [p.strip() for p in text_of(fn).split("::")]
        name, scopes = parts[-1], parts[:-1]
        if name.isidentifier() and all(s in ("", "std", "cuda") for s in scopes):
            return name
    return None


def call_arguments(call) -> list:
    args = call.child_by_field_name("arguments")
    if args is None:
        return []
    return [c for c in args.named_children if c.type != "comment"]


def function_name_of(fn) -> str | None:
    """`k` for `__global__ void k(...)`."""
    decl = fn.child_by_field_name("declarator")
    while decl is not None and decl.type in ("pointer_declarator", "reference_declarator"):
        decl = decl.child_by_field_name("declarator")
    if decl is None or decl.type != "function_declarator":
        return None
    name = decl.child_by_field_name("declarator")
    return text_of(name) if name is not None and name.type == "identifier" else None


def is_template(fn) -> bool:
    return fn.parent is not None and fn.parent.type == "template_declaration"
