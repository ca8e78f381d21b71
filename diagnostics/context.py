"""What a rule's `check(ctx)` receives for a Python file."""
from __future__ import annotations

import ast
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

from tritonify.diagnostics.model import Edit, Finding, Fix, Severity
from tritonify.diagnostics.registry import Rule
from tritonify.diagnostics.source import SourceFile
from tritonify.diagnostics.unlaunched import (dead_functions, left_over, reach, unlaunched_functions,
                                              unreachable_host_lines)
from tritonify.diagnostics.triton_ast import (
    ImportMap,
    Kernel,
    find_kernels,
    walk_module,
    walk_nodes,
)

T = TypeVar("T")


@dataclass
class PythonContext:
    source: SourceFile
    rule: Rule | None = None          # set by the engine before each rule's check
    settings: object | None = None
    workspace: object | None = None   # the WorkspaceIndex: other modules' exports (see workspace_index)
    # ids of the findings `finding` made in a dead function (diagnostics.unlaunched): the engine drops them
    dead_code_findings: set = field(default_factory=set)

    @cached_property
    def tree(self) -> ast.Module:
        assert self.source.tree is not None
        return self.source.tree

    @cached_property
    def imports(self) -> ImportMap:
        return ImportMap(self.source.tree, workspace=self.workspace, path=self.source.path)

    @cached_property
    def kernels(self) -> list[Kernel]:
        return find_kernels(self.source.tree, self.imports, walk=self._walk_module())

    @cached_property
    def target(self):
        """Which hardware the file, or a node in it, is written for (`ctx.target.nvidia(node)`)."""
        from tritonify.diagnostics.target import Targets

        return Targets(self)

    @cached_property
    def module_nodes(self) -> list[ast.AST]:
        """Every node of the module, walked once and shared by all rules (use this, not
        `ast.walk(ctx.tree)`: a rule that re-walks the module per kernel is quadratic)."""
        return self._walk_module().nodes

    def _walk_module(self):
        """One breadth-first walk that records the nodes (in `ast.walk` order), each node's parent
        and the calls, subscripts and definitions among them (`triton_ast.walk_module`): what
        nearly every rule needs."""
        cached = self.__dict__.get("_module_walk")
        if cached is None:
            cached = self.__dict__["_module_walk"] = walk_module(self.tree)
        return cached

    @cached_property
    def module_calls(self) -> list[ast.Call]:
        return self._walk_module().calls

    @cached_property
    def launches(self) -> dict[str, list[ast.Call]]:
        """Kernel name -> every `name[grid](...)` launch call in the file."""
        names = {k.name for k in self.kernels}
        out: dict[str, list[ast.Call]] = {}
        for call in self.module_calls:
            func = call.func
            if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name) and func.value.id in names:
                out.setdefault(func.value.id, []).append(call)
        return out

    def per_file(self, key: Hashable, build: Callable[[], T]) -> T:
        """`build()` computed once per file for `key` and shared by every rule: the place for
        per-kernel facts that several rules need (a kernel's data flow, its block sizes ...).
        Keys start with a string naming the fact, e.g. `("kernel-flow", kernel.node)`."""
        cache = self.__dict__.setdefault("_per_file", {})
        try:
            return cache[key]
        except KeyError:
            value = cache[key] = build()
            return value

    def release(self) -> None:
        """Drop every cached fact once the rules are done. Several refer back to the context
        (`ctx.target` holds it), so without this the file's tree and everything computed on it
        would wait for the cyclic garbage collector (a tenth of the lint time), not be freed now."""
        fields = {name: self.__dict__[name] for name in ("source", "rule", "settings", "workspace")}
        self.__dict__.clear()
        self.__dict__.update(fields)

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """`list(ast.walk(node))`, cached per node for the life of this context."""
        cache = self.__dict__.setdefault("_walk_cache", {})
        found = cache.get(id(node))
        if found is None or found[0] is not node:
            found = (node, walk_nodes(node))
            cache[id(node)] = found
        return found[1]

    @cached_property
    def parents(self) -> dict[ast.AST, ast.AST]:
        """child -> parent for the whole module (built once, shared by all rules)."""
        return self._walk_module().parents

    def ancestors(self, node: ast.AST) -> Iterable[ast.AST]:
        p = self.parents.get(node)
        while p is not None:
            yield p
            p = self.parents.get(p)

    def segment(self, node: ast.AST) -> str:
        return self.source.segment(node)

    def in_operator_context(self, node: ast.AST) -> bool:
        """True where replacing `node` by an operator expression (`2 * a - 1`) needs brackets
        to keep its meaning: an operand of an operator, or the object of `.attr` / `[i]` / a call."""
        parent = self.parents.get(node)
        if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Await, ast.Starred)):
            return True
        if isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is node:
            return True
        return isinstance(parent, ast.Call) and parent.func is node

    def replace_expr(self, node: ast.AST, text: str) -> Edit:
        """Replace an expression by `text`, bracketed where the surrounding operators need it."""
        return self.replace(node, f"({text})" if self.in_operator_context(node) else text)

    def replace(self, node: ast.AST, text: str) -> Edit:
        line, col, end_line, end_col = self.source.node_range(node)
        return Edit(line, col, end_line, end_col, text)

    def finding(
        self,
        node: ast.AST,
        message: str,
        fixes: Iterable[Fix] = (),
        *,
        severity: Severity | None = None,
        code: str | None = None,
    ) -> Finding:
        assert self.rule is not None, "the engine sets ctx.rule before calling check()"
        dead = False
        if self.rule.compile_break and (severity or self.rule.severity) is Severity.ERROR:
            unlaunched = self.unlaunched_function(node)
            if unlaunched:
                severity = Severity.WARNING
                message += (f" (nothing in this file launches or calls `{unlaunched}`, so it fails only "
                            "once something does)")
                dead = unlaunched in self.guarded_out
        found = self.rule.finding(self.source.path, self.source.node_range(node), message, fixes,
                                  severity=severity, code=code)
        if dead:   # the engine drops it: a compile break in code that cannot run (`guarded_out`)
            self.dead_code_findings.add(id(found))
        return found

    @cached_property
    def unlaunched(self) -> frozenset[str]:
        """The names of the module's jit functions that nothing in it launches or calls
        (diagnostics.unlaunched)."""
        return self._reach[0]

    @cached_property
    def _reach(self) -> tuple[frozenset[str], bool]:
        kernels, left_out = self._whole_module
        return reach(kernels, self.module_nodes, self.tree, unreachable=self._unreachable_host, left_out=left_out)

    @cached_property
    def _whole_module(self) -> tuple[list[Kernel], tuple]:
        """(every jit function of the module, the references in code the source left out) for the
        dead-code verdicts: a cut-down text (the editor's typing-time lint, diagnostics.incremental's
        `ReducedSource`) holds a few kernels, but which are dead is the whole module's answer."""
        left_kernels = getattr(self.source, "left_out_kernels", ())
        if not left_kernels:
            return self.kernels, ()
        return [*self.kernels, *left_kernels], self.source.left_out_references

    @cached_property
    def _unreachable_host(self) -> frozenset[int]:
        """Host lines a size guard rules out (diagnostics.unlaunched.unreachable_host_lines)."""
        return unreachable_host_lines(self.tree, self.kernels, self.imports.resolve, self._function_of,
                                      walk=self._walk_module())

    def _function_of(self, call: ast.Call):
        """(the `def` a host call names, in this module or a workspace module, and that module's
        `resolve`), or None."""
        func = call.func
        if isinstance(func, ast.Name):
            for stmt in self.tree.body:
                if isinstance(stmt, ast.FunctionDef) and stmt.name == func.id:
                    return stmt, self.imports.resolve
        dotted_path = self.imports.resolve(func) or ""
        module, _, name = dotted_path.rpartition(".")
        ws = self.workspace
        if not module or ws is None or module.split(".")[0] == "triton":
            return None
        try:
            target = ws.resolve(module, self.source.path)
            if target is None or target.kind != "module" or target.location is None:
                return None
            summary = ws.summary(target.location)
            parsed = ws.parsed(summary)
        except (OSError, ValueError, RecursionError):
            return None
        if parsed is None:
            return None
        for stmt in parsed[1].body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
                return stmt, ImportMap(parsed[1], workspace=ws, path=str(summary.path)).resolve
        return None

    @cached_property
    def dead(self) -> frozenset[str]:
        """The unlaunched functions of a module whose host code launches or calls its other jit
        functions, less public ones another file may import (diagnostics.unlaunched.dead_functions):
        TRI022 skips their prints; of their compile breaks only `guarded_out`'s are not reported."""
        if not self._reach[1] or not self._reach[0]:
            return frozenset()
        open_texts = self.workspace.open_texts() if hasattr(self.workspace, "open_texts") else None
        kernels, left_out = self._whole_module
        return dead_functions(kernels, self.module_nodes, self.tree, self.source.path, self._unreachable_host,
                              open_texts, left_out)

    @cached_property
    def guarded_out(self) -> frozenset[str]:
        """The dead functions (`dead`) that the module does launch or call, but only where a size guard
        rules it out (Liger's multi-block softmax, launched in the `else` of `if n <= B` with `B` a
        `next_power_of_2(n)`): their compile breaks are not reported. A function the module never names
        is not among them: it may be a kernel being written whose launcher is not there yet, so its
        compile breaks stay, as warnings that say nothing launches it. A dead helper nothing names at all
        (`uncalled_helpers`: it returns a value, so it is called, never launched) is among them: a kernel
        being written names the helpers it calls. So is a kernel nothing names whose name, with a suffix,
        is one the host code launches (`superseded_kernels`: the general version a launched variant
        replaced), and what only those call (`left_over`)."""
        dead = self.dead
        if not dead:
            return frozenset()
        kernels, left_out = self._whole_module
        never_named = unlaunched_functions(kernels, self.module_nodes, self.tree, left_out)   # guard or not
        return (dead - never_named) | (dead & left_over(kernels, self.module_nodes, left_out))

    def unlaunched_function(self, node: ast.AST) -> str | None:
        """The name of the innermost jit function holding `node` when nothing in the module launches
        or calls it (diagnostics.unlaunched), else None."""
        line = getattr(node, "lineno", None)
        if line is None or not self.unlaunched:
            return None
        holding = [k for k in self.kernels if k.node.lineno <= line <= (k.node.end_lineno or k.node.lineno)]
        if not holding:
            return None
        innermost = max(holding, key=lambda k: k.node.lineno)
        return innermost.name if innermost.name in self.unlaunched else None

