"""Which precision does a CUDA expression compute in? A small, static inference for device code.

The rules about FP64 promotion need to know, for an expression, whether it is single precision,
genuinely double, or double only because a float met a double constant. C++'s usual arithmetic
conversions decide that, from the declared types of variables and parameters in scope and the
literals' suffixes. This module computes one `Kind` per expression node:

* FLOAT: single precision (float variables, `x[i]` of a `float*`, `v.x` of a `float4`, `expf(..)`)
* DOUBLE: genuinely double (declared double, cast to double): the author chose FP64
* CONSTANT: a double constant (unsuffixed floating literal, `M_PI`, a `#define` of one)
* PROMOTED: double only because a float met a double constant (`x * 0.5` with `float x`)
* INT_DOUBLE: double made from integers and a double constant (`1.0 / n` with `int n`)
* INT: integral; OTHER: __half, bfloat16, pointers, structs; UNKNOWN: anything not resolved
  (template parameters, unknown functions): rules stay quiet on it.

It also says where a value goes (`consumer`): into another double operation ("arith", "mathfn"),
into a float store ("narrow"), a comparison, a genuinely double destination ("double") ...
nvcc folds one float operation with an exactly representable constant back to FP32 when the
result is narrowed to float at once (measured, see references/rules/CUD001.md), so the rules
need that context to stay precise.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cached_property

from tritonify.diagnostics.cuda import syntax
from tritonify.diagnostics.cuda.syntax import ARITHMETIC_OPS, COMPARISON_OPS, COMPOUND_ARITHMETIC_OPS, text_of


class Kind(str, enum.Enum):
    FLOAT = "float"
    DOUBLE = "double"
    CONSTANT = "double constant"
    PROMOTED = "promoted"
    INT_DOUBLE = "int-double"
    INT = "int"
    OTHER = "other"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class DeclType:
    """A declared type reduced to what matters here: element kind, indirection, vector-ness."""

    kind: Kind
    depth: int = 0          # pointers and array dimensions
    vector: bool = False    # float2/float4/double2/int4 ...: `.x` gives `kind`

    def deref(self) -> "DeclType | None":
        return DeclType(self.kind, self.depth - 1, self.vector) if self.depth > 0 else None

    @property
    def value_kind(self) -> Kind:
        if self.depth > 0 or self.vector:
            return Kind.OTHER
        return self.kind


INT_TYPE_NAMES = {
    "size_t", "ptrdiff_t", "ssize_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
    "uint32_t", "uint64_t", "intptr_t", "uintptr_t", "index_t", "dim3", "uint", "ushort", "uchar",
}
OTHER_FLOAT_TYPE_NAMES = {
    "__half", "half", "__half2", "half2", "__nv_bfloat16", "nv_bfloat16", "__nv_bfloat162", "nv_bfloat162",
    "__nv_fp8_e4m3", "__nv_fp8_e5m2", "cuComplex", "cuFloatComplex", "cuDoubleComplex",
}
VECTOR_PREFIXES = {"float": Kind.FLOAT, "double": Kind.DOUBLE, "int": Kind.INT, "uint": Kind.INT, "char": Kind.INT,
                   "uchar": Kind.INT, "short": Kind.INT, "ushort": Kind.INT, "long": Kind.INT, "ulong": Kind.INT,
                   "longlong": Kind.INT, "ulonglong": Kind.INT}
BUILTIN_INDEX_VARIABLES = {"threadIdx", "blockIdx", "blockDim", "gridDim"}

# Double-precision math functions with a single-precision twin (the CUDA Math API names).
DOUBLE_MATH_TO_FLOAT = {
    name: name + "f" for name in (
        "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "logb", "sqrt", "rsqrt", "cbrt", "rcbrt",
        "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "atan2",
        "sinpi", "cospi", "erf", "erfc", "erfinv", "erfcinv", "erfcx", "normcdf", "normcdfinv", "lgamma", "tgamma",
        "fabs", "floor", "ceil", "round", "trunc", "rint", "nearbyint", "fmod", "remainder", "hypot", "pow",
        "fmax", "fmin", "fma", "fdim", "copysign", "ldexp", "scalbn", "j0", "j1", "y0", "y1", "norm3d", "rhypot",
    )
}
# Functions that return float whatever they are given (they take float parameters).
FLOAT_FUNCTIONS = set(DOUBLE_MATH_TO_FLOAT.values()) | {
    "__expf", "__exp10f", "__logf", "__log2f", "__log10f", "__powf", "__sinf", "__cosf", "__tanf", "__fdividef",
    "__fsqrt_rn", "__fsqrt_rz", "__frsqrt_rn", "__frcp_rn", "__fadd_rn", "__fsub_rn", "__fmul_rn", "__fdiv_rn",
    "__fmaf_rn", "__fmaf_rz", "__saturatef", "__int_as_float", "__uint_as_float", "__half2float", "__bfloat162float",
    "__low2float", "__high2float", "__int2float_rn", "__uint2float_rn", "__ll2float_rn", "__double2float_rn",
    "sincosf", "fmaxf", "fminf", "fabsf", "tanhf", "sigmoidf",
}
INT_FUNCTIONS = {
    "__float2int_rn", "__float2int_rz", "__float2int_rd", "__float2int_ru", "__float2uint_rn", "__float_as_int",
    "__float_as_uint", "__popc", "__clz", "__ffs", "__ballot_sync", "__any_sync", "__all_sync", "__activemask",
    "__syncthreads_count", "__lane_id", "__double2int_rn", "__mul24", "__umul24",
}
SAME_AS_ARGUMENTS = {"min", "max", "abs"}   # CUDA overloads these for int, float and double
VALUE_OF_SECOND_ARGUMENT = {"__shfl_sync", "__shfl_xor_sync", "__shfl_down_sync", "__shfl_up_sync", "__reduce_add_sync"}
VALUE_OF_POINTEE = {"__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv", "atomicAdd", "atomicMax", "atomicMin",
                    "atomicExch", "atomicCAS", "atomicSub"}
# Double constants from <math.h> / math_constants.h spelled as names.
DOUBLE_CONSTANT_NAMES = {
    "M_PI", "M_PI_2", "M_PI_4", "M_1_PI", "M_2_PI", "M_2_SQRTPI", "M_E", "M_LOG2E", "M_LOG10E", "M_LN2", "M_LN10",
    "M_SQRT2", "M_SQRT1_2", "CUDART_PI", "CUDART_PIO2", "CUDART_PIO4", "CUDART_SQRT_2PI", "CUDART_SQRT_HALF",
    "CUDART_LN2", "CUDART_L2E", "CUDART_2_OVER_PI", "CUDART_SQRT_2_OVER_PI",
}
FLOAT_CONSTANT_NAMES = {"INFINITY", "NAN", "HUGE_VALF", "FLT_MAX", "FLT_MIN", "FLT_EPSILON"}


def kind_of_type_name(name: str) -> DeclType:
    """`float` -> FLOAT, `float4` -> vector FLOAT, `__half` -> OTHER, `T` -> UNKNOWN."""
    name = name.split("::")[-1].strip()
    if name == "float":
        return DeclType(Kind.FLOAT)
    if name == "double":
        return DeclType(Kind.DOUBLE)
    if name in ("int", "char", "bool", "short", "long", "unsigned", "signed") or name in INT_TYPE_NAMES:
        return DeclType(Kind.INT)
    if name in OTHER_FLOAT_TYPE_NAMES or name == "void":
        return DeclType(Kind.OTHER)
    for prefix, kind in VECTOR_PREFIXES.items():
        if name.startswith(prefix) and name[len(prefix):] in ("1", "2", "3", "4"):
            return DeclType(kind, vector=True)
    return DeclType(Kind.UNKNOWN)


def base_type(type_node) -> DeclType | None:
    """The DeclType of a declaration's `type` field; None for `auto` (inferred from the value)."""
    if type_node is None:
        return DeclType(Kind.UNKNOWN)
    t = type_node.type
    if t == "placeholder_type_specifier":
        return None
    if t == "primitive_type":
        return kind_of_type_name(text_of(type_node))
    if t == "sized_type_specifier":
        words = text_of(type_node).split()
        return DeclType(Kind.DOUBLE) if "double" in words else DeclType(Kind.INT)
    if t in ("type_identifier", "qualified_identifier"):
        return kind_of_type_name(text_of(type_node))
    return DeclType(Kind.UNKNOWN)


def declarator_name_and_depth(declarator) -> tuple[object | None, int]:
    """(identifier node, pointer/array depth) of a declarator; (None, 0) for function declarators."""
    depth = 0
    node = declarator
    while node is not None:
        t = node.type
        if t == "identifier":
            return node, depth
        if t in ("pointer_declarator", "array_declarator"):
            depth += 1
            node = node.child_by_field_name("declarator")
        elif t == "init_declarator":
            node = node.child_by_field_name("declarator")
        elif t == "reference_declarator":
            node = next((c for c in node.named_children if c.type != "type_qualifier"), None)
        elif t in ("parenthesized_declarator", "attributed_declarator"):
            node = node.named_children[0] if node.named_children else None
        else:
            return None, 0
    return None, 0


def type_descriptor_type(desc) -> DeclType:
    """`float`, `const float4*` in casts and template arguments."""
    if desc is None:
        return DeclType(Kind.UNKNOWN)
    base = base_type(desc.child_by_field_name("type")) or DeclType(Kind.UNKNOWN)
    depth = 0
    decl = desc.child_by_field_name("declarator")
    while decl is not None:
        if decl.type in ("abstract_pointer_declarator", "abstract_array_declarator"):
            depth += 1
        decl = decl.child_by_field_name("declarator")
    return DeclType(base.kind, depth, base.vector)


@dataclass
class _Declaration:
    scope_start: int
    scope_end: int
    position: int
    decl_type: DeclType | None   # None: `auto`, inferred from `value`
    value: object | None


class TypeInfo:
    """Kinds of expressions and declared types of names, for one CUDA text."""

    def __init__(self, tree, compiler: str = "nvcc"):
        self.tree = tree
        self.root = tree.root_node
        self.compiler = compiler
        self._kinds: dict[int, Kind] = {}
        self._in_progress: set[int] = set()

    # ---- declarations ------------------------------------------------------------------------
    @staticmethod
    def _owner(node) -> int:
        """Start byte of the outermost function around a node (-1 at file scope): declarations
        are indexed by it so that a lookup only scans its own function and the globals."""
        owner, p = -1, node
        while p is not None:
            if p.type == "function_definition":
                owner = p.start_byte
            p = p.parent
        return owner

    @cached_property
    def _declarations(self) -> dict[tuple[str, int], list[_Declaration]]:
        out: dict[tuple[str, int], list[_Declaration]] = {}
        for node in syntax.walk(self.root):
            if node.type == "declaration":
                scope = self._scope_of(node)
                base = base_type(node.child_by_field_name("type"))
                for decl in node.children_by_field_name("declarator"):
                    ident, depth = declarator_name_and_depth(decl)
                    if ident is None:
                        continue
                    value = decl.child_by_field_name("value") if decl.type == "init_declarator" else None
                    dtype = None if base is None else DeclType(base.kind, depth, base.vector)
                    if dtype is None and depth:
                        dtype = DeclType(Kind.OTHER)
                    out.setdefault((text_of(ident), self._owner(node)), []).append(
                        _Declaration(scope.start_byte, scope.end_byte, node.start_byte, dtype, value))
            elif node.type == "parameter_declaration":
                owner = node.parent.parent if node.parent is not None else None  # parameter_list -> declarator
                fn = owner
                while fn is not None and fn.type not in ("function_definition", "lambda_expression", "declaration",
                                                         "field_declaration", "translation_unit"):
                    fn = fn.parent
                if fn is None or fn.type not in ("function_definition", "lambda_expression"):
                    continue
                body = fn.child_by_field_name("body")
                if body is None:
                    continue
                base = base_type(node.child_by_field_name("type")) or DeclType(Kind.UNKNOWN)
                ident, depth = declarator_name_and_depth(node.child_by_field_name("declarator"))
                if ident is None:
                    continue
                out.setdefault((text_of(ident), self._owner(node)), []).append(
                    _Declaration(body.start_byte, body.end_byte, body.start_byte, DeclType(base.kind, depth, base.vector), None))
        return out

    @staticmethod
    def _scope_of(node):
        p = node.parent
        while p is not None and p.type not in ("compound_statement", "for_statement", "for_range_loop",
                                               "translation_unit", "declaration_list", "lambda_expression"):
            p = p.parent
        return p if p is not None else node

    @cached_property
    def _double_macros(self) -> dict[str, str]:
        """`#define EPS 1e-5` -> {"EPS": "1e-5"}: object-like macros that are one double constant."""
        out = {}
        for node in syntax.walk(self.root):
            if node.type == "preproc_def":
                name = node.child_by_field_name("name")
                value = node.child_by_field_name("value")
                if name is None or value is None:
                    continue
                body = text_of(value).strip()
                while body.startswith("(") and body.endswith(")"):
                    body = body[1:-1].strip()
                if body and syntax.classify_number(body).kind == "double" and " " not in body:
                    out[text_of(name)] = body
        return out

    @cached_property
    def _function_returns(self) -> dict[str, DeclType]:
        """Return types of the non-template functions defined in this text, by name."""
        out: dict[str, DeclType] = {}
        seen: set[str] = set()
        for node in syntax.walk(self.root):
            if node.type != "function_definition":
                continue
            name = syntax.function_name_of(node)
            if not name:
                continue
            rtype = DeclType(Kind.UNKNOWN) if syntax.is_template(node) else (base_type(node.child_by_field_name("type")) or DeclType(Kind.UNKNOWN))
            if name in seen and out.get(name) != rtype:
                out[name] = DeclType(Kind.UNKNOWN)   # overloads: do not guess
            else:
                out[name] = rtype
            seen.add(name)
        return out

    def double_macro(self, name: str) -> str | None:
        return self._double_macros.get(name)

    def lookup(self, name: str, at) -> DeclType | None:
        best, best_key = None, None
        owner = self._owner(at)
        candidates = self._declarations.get((name, owner), [])
        if owner != -1:
            candidates = candidates + self._declarations.get((name, -1), [])
        for d in candidates:
            if d.scope_start <= at.start_byte < d.scope_end and d.position <= at.start_byte:
                key = (d.scope_start, d.position)
                if best_key is None or key > best_key:
                    best, best_key = d, key
        if best is None:
            return None
        if best.decl_type is not None:
            return best.decl_type
        if best.value is None:
            return DeclType(Kind.UNKNOWN)
        return DeclType(self.kind(best.value))

    # ---- expression types --------------------------------------------------------------------
    def expr_type(self, node) -> DeclType | None:
        """Declared type of an lvalue-like expression (names, `x[i]`, `*p`, `v.x`, casts)."""
        node = syntax.unwrap_parentheses(node)
        if node is None:
            return None
        t = node.type
        if t == "identifier":
            return self.lookup(text_of(node), node)
        if t == "subscript_expression":
            inner = self.expr_type(node.child_by_field_name("argument"))
            return inner.deref() if inner is not None else None
        if t == "pointer_expression" and syntax.operator_of(node) == "*":
            inner = self.expr_type(node.child_by_field_name("argument"))
            return inner.deref() if inner is not None else None
        if t == "field_expression":
            arg = node.child_by_field_name("argument")
            if arg is not None and arg.type == "identifier" and text_of(arg) in BUILTIN_INDEX_VARIABLES:
                return DeclType(Kind.INT)
            inner = self.expr_type(arg)
            if inner is None:
                return None
            if syntax.operator_of(node) == "->":
                inner = inner.deref()
            if inner is not None and inner.vector and inner.depth == 0:
                return DeclType(inner.kind)
            return None
        if t == "call_expression":
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "template_function":
                name = text_of(fn.child_by_field_name("name"))
                if name in ("static_cast", "reinterpret_cast", "const_cast"):
                    args = fn.child_by_field_name("arguments")
                    desc = next((c for c in args.named_children if c.type == "type_descriptor"), None) if args else None
                    return type_descriptor_type(desc)
            return None
        if t == "cast_expression":
            return type_descriptor_type(node.child_by_field_name("type"))
        return None

    def kind(self, node) -> Kind:
        if node is None:
            return Kind.UNKNOWN
        cached = self._kinds.get(node.id)
        if cached is not None:
            return cached
        if node.id in self._in_progress:
            return Kind.UNKNOWN
        self._in_progress.add(node.id)
        try:
            result = self._compute_kind(node)
        finally:
            self._in_progress.discard(node.id)
        self._kinds[node.id] = result
        return result

    def _compute_kind(self, node) -> Kind:
        t = node.type
        if t == "number_literal":
            lit = syntax.classify_number(text_of(node))
            return {"double": Kind.CONSTANT, "float": Kind.FLOAT, "int": Kind.INT}.get(lit.kind, Kind.OTHER)
        if t in ("char_literal", "true", "false", "sizeof_expression", "alignof_expression"):
            return Kind.INT
        if t in ("string_literal", "null", "nullptr", "lambda_expression", "initializer_list"):
            return Kind.OTHER
        if t == "parenthesized_expression":
            inner = syntax.unwrap_parentheses(node)
            return self.kind(inner) if inner is not node else Kind.UNKNOWN
        if t == "identifier":
            name = text_of(node)
            dtype = self.lookup(name, node)
            if dtype is not None:
                return dtype.value_kind
            if name in DOUBLE_CONSTANT_NAMES or self.double_macro(name) is not None:
                return Kind.CONSTANT
            if name in FLOAT_CONSTANT_NAMES or (name.startswith("CUDART_") and name.endswith("_F")):
                return Kind.FLOAT
            if name == "warpSize":
                return Kind.INT
            return Kind.UNKNOWN
        if t in ("subscript_expression", "field_expression", "cast_expression") or (
            t == "pointer_expression" and syntax.operator_of(node) == "*"
        ):
            dtype = self.expr_type(node)
            return dtype.value_kind if dtype is not None else Kind.UNKNOWN
        if t == "pointer_expression":
            return Kind.OTHER
        if t == "unary_expression":
            op = syntax.operator_of(node)
            arg = node.child_by_field_name("argument")
            return self.kind(arg) if op in ("-", "+") else Kind.INT
        if t == "update_expression":
            return self.kind(node.child_by_field_name("argument"))
        if t == "binary_expression":
            op = syntax.operator_of(node)
            if op in ARITHMETIC_OPS:
                return combine(self.kind(node.child_by_field_name("left")), self.kind(node.child_by_field_name("right")))
            if op in ("%", "<<", ">>", "&", "|", "^", "&&", "||") or op in COMPARISON_OPS:
                return Kind.INT
            return Kind.UNKNOWN
        if t == "assignment_expression":
            return self.kind(node.child_by_field_name("left"))
        if t == "conditional_expression":
            return combine_select(self.kind(node.child_by_field_name("consequence")),
                                  self.kind(node.child_by_field_name("alternative")))
        if t == "call_expression":
            return self._call_kind(node)
        if t == "comma_expression":
            return self.kind(node.child_by_field_name("right"))
        return Kind.UNKNOWN

    def _call_kind(self, call) -> Kind:
        fn = call.child_by_field_name("function")
        if fn is None:
            return Kind.UNKNOWN
        if fn.type == "primitive_type":           # float(x), double(x), int(x)
            return kind_of_type_name(text_of(fn)).value_kind
        if fn.type == "template_function":
            dtype = self.expr_type(call)
            return dtype.value_kind if dtype is not None else Kind.UNKNOWN
        name = syntax.callee_name(call)
        if name is None:
            return Kind.UNKNOWN
        args = syntax.call_arguments(call)
        if name in DOUBLE_MATH_TO_FLOAT:
            return self.math_result(name, [self.kind(a) for a in args])
        if name in FLOAT_FUNCTIONS:
            return Kind.FLOAT
        if name in INT_FUNCTIONS:
            return Kind.INT
        if name in SAME_AS_ARGUMENTS and args:
            result = self.kind(args[0])
            for arg in args[1:]:
                result = combine(result, self.kind(arg))
            return result
        if name in VALUE_OF_SECOND_ARGUMENT and len(args) >= 2:
            return self.kind(args[1])
        if name in VALUE_OF_POINTEE and args:
            dtype = self.expr_type(args[0])
            pointee = dtype.deref() if dtype is not None else None
            return pointee.value_kind if pointee is not None else Kind.UNKNOWN
        if fn.type == "identifier" and name in self._function_returns:
            return self._function_returns[name].value_kind
        return Kind.UNKNOWN

    def math_result(self, name: str, kinds: list[Kind]) -> Kind:
        """Precision a double-named math function runs in, given its arguments' kinds.

        C++ overloads (CUDA declares `float exp(float)`) pick the float version for float
        arguments; a double constant among them selects the double version."""
        if not kinds or any(k in (Kind.UNKNOWN, Kind.OTHER) for k in kinds):
            return Kind.UNKNOWN
        if Kind.DOUBLE in kinds:
            return Kind.DOUBLE
        floatish = any(k in (Kind.FLOAT, Kind.PROMOTED) for k in kinds)
        doubleish = any(k in (Kind.CONSTANT, Kind.INT_DOUBLE, Kind.PROMOTED) for k in kinds)
        if floatish and doubleish:
            return Kind.PROMOTED
        if floatish:
            if self.pow_float_int_is_double(name, kinds):
                return Kind.PROMOTED
            return Kind.FLOAT
        if all(k == Kind.CONSTANT for k in kinds):
            return Kind.CONSTANT
        if doubleish:
            return Kind.INT_DOUBLE
        return Kind.UNKNOWN

    def pow_float_int_is_double(self, name: str, kinds: list[Kind]) -> bool:
        """`pow(float, int)`: nvcc resolves it to the double pow (C++11 promotion), NVRTC to a
        float overload (both measured on CUDA 13.0)."""
        return name == "pow" and self.compiler == "nvcc" and len(kinds) == 2 and kinds[0] == Kind.FLOAT and kinds[1] == Kind.INT

    # ---- where values go ---------------------------------------------------------------------
    def consumer(self, node) -> str:
        """Where the value of `node` goes: "arith" (another arithmetic operation), "compare",
        "mathfn" (argument of a double-named math function), "narrow" (stored or passed as
        float), "double" (a genuinely double destination), "int", "auto" (an `auto` variable
        that takes the expression's own type), or "unknown"."""
        child, parent = node, node.parent
        while parent is not None and (parent.type == "parenthesized_expression" or (
                parent.type == "unary_expression" and syntax.operator_of(parent) in ("-", "+"))):
            child, parent = parent, parent.parent
        if parent is None:
            return "unknown"
        t = parent.type
        if t == "binary_expression":
            op = syntax.operator_of(parent)
            if op in ARITHMETIC_OPS:
                return "arith"
            if op in COMPARISON_OPS:
                return "compare"
            return "unknown"
        if t == "assignment_expression":
            if parent.child_by_field_name("right") != child:
                return "unknown"
            op = syntax.operator_of(parent)
            left_kind = self.kind(parent.child_by_field_name("left"))
            if op in COMPOUND_ARITHMETIC_OPS and left_kind in (Kind.FLOAT, Kind.PROMOTED):
                return "arith"
            return _destination(left_kind)
        if t == "init_declarator":
            if parent.child_by_field_name("value") != child:
                return "unknown"
            decl = parent.parent
            base = base_type(decl.child_by_field_name("type")) if decl is not None else DeclType(Kind.UNKNOWN)
            if base is None:
                return "auto"
            _, depth = declarator_name_and_depth(parent)
            return _destination(DeclType(base.kind, depth, base.vector).value_kind)
        if t == "return_statement":
            fn = syntax.enclosing_function(parent)
            if fn is None or fn.type != "function_definition":
                return "unknown"
            rtype = base_type(fn.child_by_field_name("type"))
            return _destination(rtype.value_kind) if rtype is not None else "unknown"
        if t == "argument_list":
            call = parent.parent
            if call is None or call.type != "call_expression":
                return "unknown"
            fn = call.child_by_field_name("function")
            if fn is not None and fn.type == "primitive_type":
                return _destination(kind_of_type_name(text_of(fn)).value_kind)
            if fn is not None and fn.type == "template_function":
                dtype = self.expr_type(call)
                return _destination(dtype.value_kind) if dtype is not None else "unknown"
            name = syntax.callee_name(call)
            if name in DOUBLE_MATH_TO_FLOAT:
                return "mathfn"
            if name in FLOAT_FUNCTIONS:
                return "narrow"
            return "unknown"
        if t == "cast_expression":
            return _destination(type_descriptor_type(parent.child_by_field_name("type")).value_kind)
        if t == "conditional_expression":
            if parent.child_by_field_name("condition") == child:
                return "unknown"
            return self.consumer(parent)
        if t == "subscript_argument_list":
            return "int"
        return "unknown"

    def final_destination(self, node) -> str:
        """Follow a value through the arithmetic and math calls it feeds to where it ends."""
        current = node
        for _ in range(200):
            where = self.consumer(current)
            if where not in ("arith", "mathfn"):
                return where
            current = _climb_to_operation(current)
            if current is None:
                return "unknown"
        return "unknown"


def _destination(kind: Kind) -> str:
    return {Kind.FLOAT: "narrow", Kind.DOUBLE: "double", Kind.INT: "int"}.get(kind, "unknown")


def _climb_to_operation(node):
    """The arithmetic expression or math call that consumes `node`."""
    p = node.parent
    while p is not None:
        if p.type == "binary_expression":
            return p
        if p.type == "call_expression":
            return p
        if p.type not in ("parenthesized_expression", "unary_expression", "argument_list", "conditional_expression"):
            return None
        p = p.parent
    return None


def combine(a: Kind, b: Kind) -> Kind:
    """The usual arithmetic conversions of C++, with the origin of doubles kept."""
    if Kind.UNKNOWN in (a, b) or Kind.OTHER in (a, b):
        return Kind.UNKNOWN
    if Kind.DOUBLE in (a, b):
        return Kind.DOUBLE
    if a == b:
        return a
    kinds = {a, b}
    if kinds == {Kind.INT, Kind.FLOAT}:
        return Kind.FLOAT
    if kinds & {Kind.FLOAT, Kind.PROMOTED}:
        return Kind.PROMOTED
    return Kind.INT_DOUBLE   # integers with double constants


def combine_select(a: Kind, b: Kind) -> Kind:
    """`c ? a : b`: a float branch against a double constant is folded by the compiler."""
    if {a, b} == {Kind.FLOAT, Kind.CONSTANT}:
        return Kind.FLOAT
    return combine(a, b)
