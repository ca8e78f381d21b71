"""The rule registry: every module under `diagnostics/rules/` that defines `RULE` and `check`.

A rule module looks like this (see `rules/triton/tri001_libdevice_tanh.py`):

    RULE = Rule(code="TRI001", name="libdevice-tanh", summary="...", severity=Severity.WARNING)

    def check(ctx: PythonContext) -> Iterator[Finding]:
        for kernel in ctx.kernels:
            ...
            yield ctx.finding(node, "message that names the fix", fixes=[...])

Its page is `references/rules/<CODE>.md`; its tests are `tests/rules/test_<code>.py`.
Adding a rule means adding those three files: nothing else is edited.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterable

from tritonify.diagnostics.model import Finding, Fix, Severity
from tritonify.infra.discovery import DiscoveryError, discover
from tritonify.references import RULES

STATEMENT_SCOPE, KERNEL_SCOPE = "statement", "kernel"
SCOPES = (STATEMENT_SCOPE, KERNEL_SCOPE)


@dataclass(frozen=True)
class Rule:
    code: str                    # stable code, e.g. TRI001
    name: str                    # kebab-case name, e.g. libdevice-tanh
    summary: str                 # one line: what it detects
    severity: Severity = Severity.WARNING
    # "triton": looks only inside kernels (a file that cannot define one is not parsed for it,
    # see kernel_screen); "python-host": host code (its module may define `may_fire(text)`);
    # "cuda"
    language: str = "triton"
    fixable: bool = False        # has a machine-applicable fix
    # With `fixable`: False when every fix changes behaviour (Applicability.UNSAFE), so it is only
    # offered in the editor for review and `check --fix` never applies it ("editor" in the README).
    safe_fix: bool = True
    # In the default set (ruff's model): rules measured at >= 90% true positives on the real-world
    # study run unless deselected; the others are opt-in and run only when `select` names their
    # code or "ALL".
    default: bool = True
    # Error findings that say the kernel does not compile (Triton's frontend rejects it): an error
    # where something in the module launches or calls the function, a warning saying so where nothing
    # does (Triton compiles a kernel at its first launch: diagnostics.unlaunched).
    compile_break: bool = False
    # What one finding depends on, declared by the rule (never guessed): STATEMENT_SCOPE when each
    # finding is decided by one statement of a kernel, read with facts the file gives without a
    # flow over the kernel (its imports, which functions are kernels, the kernel's parameters and
    # the names it binds, the module's top-level bindings); KERNEL_SCOPE (the default) for
    # anything wider: types, shapes or values followed through the kernel, its launches, other
    # kernels. The language server answers an edit with the statement-scope findings of what was
    # just typed first (engine.lint_source's `statements_first`), then with all of them.
    scope: str = "kernel"
    # The kernel template that replaces what the rule reports (a name `tritonify template --list`
    # prints), or "": the editor offers "Insert template" as a quick fix on each of its findings,
    # wherever the finding is (server/code_actions.py), beside the rule's own fixes.
    template: str = ""
    # For an opt-in rule whose precision would admit it to the default set: why it is opt-in all
    # the same (its cost, say), as its page's "Measured precision" says it instead of a precision reason.
    opt_in_because: str = ""

    @property
    def page(self) -> Path:
        return RULES / f"{self.code}.md"

    @property
    def url(self) -> str:
        return self.page.as_uri()

    def finding(self, path: str, span: tuple[int, int, int, int], message: str, fixes: Iterable[Fix] = (),
                *, severity: Severity | None = None, code: str | None = None) -> Finding:
        """A finding of this rule at `span` = (line, column, end_line, end_column), linked to its page."""
        line, col, end_line, end_col = span
        return Finding(code=code or self.code, message=message, line=line, column=col, end_line=end_line,
                       end_column=end_col, severity=severity or self.severity, path=path, fixes=list(fixes),
                       url=self.url)


@dataclass(frozen=True)
class RegisteredRule:
    rule: Rule
    check: Callable
    module: ModuleType

    @property
    def code(self) -> str:
        return self.rule.code


@lru_cache(maxsize=1)
def all_rules() -> tuple[RegisteredRule, ...]:
    """Every registered rule, sorted by code."""
    import tritonify.diagnostics.rules as rules_pkg

    found: dict[str, RegisteredRule] = {}
    for mod in discover(rules_pkg, kind="rule", name_pattern=r"(tri|cud)\d{3}_[a-z0-9_]+",
                        required=("RULE", "check"), recursive=True):
        rule, check = mod.RULE, mod.check
        if not isinstance(rule, Rule) or not callable(check):
            raise DiscoveryError(f"{mod.__name__}: RULE must be a Rule and check a function")
        if rule.code.lower() != mod.__name__.rsplit(".", 1)[-1][:6]:
            raise DiscoveryError(f"{mod.__name__}: its RULE's code {rule.code} differs from its file name")
        if rule.scope not in SCOPES:
            raise DiscoveryError(f"{mod.__name__}: its RULE's scope {rule.scope!r} is not one of {', '.join(SCOPES)}")
        if rule.code in found:
            raise DiscoveryError(f"duplicate rule code {rule.code} in {mod.__name__} and {found[rule.code].module.__name__}")
        found[rule.code] = RegisteredRule(rule, check, mod)
    return tuple(found[c] for c in sorted(found))


@lru_cache(maxsize=1)
def opt_in_codes() -> frozenset[str]:
    """Codes of the rules outside the default set (see `Rule.default`)."""
    return frozenset(r.code for r in all_rules() if not r.rule.default)


def get_rule(code: str) -> RegisteredRule | None:
    code = code.strip().upper()
    for r in all_rules():
        if r.code == code or r.rule.name == code.lower():
            return r
    return None
