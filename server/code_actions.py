"""Code actions: each rule's quick fixes, "Disable CODE for this line", fix-all on save,
"Insert template ...", "Benchmark / Profile this kernel", and "Write a benchmark contract" for a
kernel that has none (the scaffold of `tritonify bench --write-contract`, as a new file).

Edits are computed by the engine (`Finding.fixes`, `diagnostics.noqa`, `fixes.fix_until_stable_async`);
this module only turns them into WorkspaceEdits. Costly edits (fix-all re-lints the file until
nothing changes; a template reads its source) are left out of the list and filled in by
`codeAction/resolve` when the client supports that; a client without resolve gets fix-all in
one pass (the fixes already known, no re-lint), which keeps the list quick.
"""
from __future__ import annotations

import asyncio
import re
from typing import Any

from lsprotocol import types

from tritonify.contract import CODE_ACTION_KINDS, COMMANDS

from tritonify.diagnostics.engine import language_of
from tritonify.diagnostics.fixes import MAX_FIX_PASSES, fix_until_stable_async
from tritonify.diagnostics.lookup import enclosing_definitions, mentions_op
from tritonify.diagnostics.model import Applicability, Finding
from tritonify.diagnostics.noqa import noqa_edit
from tritonify.diagnostics.registry import get_rule
from tritonify.server.analysis import Analysis
from tritonify.server.app import TritonifyServer, guarded
from tritonify.server.diagnostics_feature import to_diagnostic
from tritonify.server.documents import file_path
from tritonify.server.inspect_feature import InspectFeature
from tritonify.server.positions import overlaps

# The kinds by name, from the contract (commands.json, also compiled into the extension). The
# quickfix.* ones are the same actions in the Ctrl+. menu (VS Code lists quickfix and refactor kinds
# there, source kinds only under Source Action): fix-all on any line with a fix, the contract
# inside a kernel.
FIX_ALL = CODE_ACTION_KINDS["fixAll"]
INSERT_TEMPLATE = CODE_ACTION_KINDS["insertTemplate"]
RUN_KERNEL = CODE_ACTION_KINDS["runKernel"]
QUICK_FIX_ALL = CODE_ACTION_KINDS["quickFixAll"]
QUICK_CONTRACT = CODE_ACTION_KINDS["writeContract"]
KINDS = [CODE_ACTION_KINDS[name] for name in COMMANDS["advertisedCodeActionKinds"]]
FIX_ALL_TITLE = "Fix all Tritonify findings (safe fixes)"


def _wanted(only: list[str] | None, kind: str) -> bool:
    """LSP's `only` filter: a requested kind matches itself and its sub-kinds."""
    if not only:
        return True
    return any(kind == k or kind.startswith(k + ".") or k == "" for k in only)


def workspace_edit(server: TritonifyServer, analysis: Analysis, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    """A WorkspaceEdit for one document; versioned (so a stale edit is refused by the
    client) when the client supports documentChanges."""
    caps = server.client_capabilities.workspace
    if caps and caps.workspace_edit and caps.workspace_edit.document_changes and analysis.version is not None:
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=analysis.uri, version=analysis.version),
            edits=edits)])
    return types.WorkspaceEdit(changes={analysis.uri: edits})


def _resolve_supported(server: TritonifyServer) -> bool:
    caps = server.client_capabilities.text_document
    ca = caps.code_action if caps else None
    return bool(ca and ca.resolve_support and "edit" in (ca.resolve_support.properties or []))


# ---- edits ------------------------------------------------------------------------------------
async def fix_all_text(server: TritonifyServer, analysis: Analysis, passes: int = MAX_FIX_PASSES) -> tuple[str, int]:
    """The document with every safe fix applied: the loop `check --fix` runs
    (`fixes.fix_until_stable_async`), linting each pass in the worker."""
    async def lint(text: str):
        return (await server.analyse(analysis.uri, None, text, analysis.path, analysis.settings)).findings

    outcome = await fix_until_stable_async(analysis.text, analysis.findings, lint,
                                           language=language_of(analysis.path) or "python", passes=passes)
    return outcome.text, outcome.count


async def fix_all_edit(server: TritonifyServer, analysis: Analysis, passes: int = MAX_FIX_PASSES) -> types.WorkspaceEdit | None:
    text, n = await fix_all_text(server, analysis, passes)
    if not n or text == analysis.text:
        return None
    return workspace_edit(server, analysis, [types.TextEdit(range=analysis.index.whole_document(), new_text=text)])


def _finding_with_safe_fix_at(analysis: Analysis, rng: types.Range) -> bool:
    for f in analysis.findings:
        if f.fix is not None and f.fix.applicability == Applicability.SAFE and overlaps(
                analysis.index.range(f.line, f.column, f.end_line, f.end_column), rng):
            return True
    return False


def _has_safe_fix(analysis: Analysis) -> bool:
    return any(f.fix is not None and f.fix.applicability == Applicability.SAFE for f in analysis.findings)


# ---- templates ----------------------------------------------------------------------------------
def load_templates(server: TritonifyServer) -> list[Any]:
    """`tritonify.kernels.templates.list_templates()`, or [] while that package is missing."""
    try:
        from tritonify.kernels import templates as templates_module
    except ImportError:
        return []
    if not hasattr(templates_module, "list_templates"):
        return []   # the package is there but not finished (no list_templates yet)
    try:
        return list(templates_module.list_templates())
    except Exception as exc:
        server.log_once(types.MessageType.Error, f"listing templates failed: {type(exc).__name__}: {exc}")
        return []


def applicable_templates(templates: list[Any], analysis: Analysis, line: int) -> list[Any]:
    """Templates that fit the place: those whose ops the enclosing function or class names
    (an `rms_norm` template inside `def rms_norm_fwd`), or every template on a blank line
    at module level."""
    if not analysis.parsed_here:
        return []
    names = enclosing_definitions(analysis.source, line)
    if not names:
        if analysis.source.tree is None or analysis.index.line_text(line).strip():
            return []
        return list(templates)
    return [t for t in templates if any(mentions_op(n, op) for n in names for op in (getattr(t, "ops", None) or []))]


def template_edit(server: TritonifyServer, analysis: Analysis, name: str, line: int) -> types.WorkspaceEdit | None:
    for template in load_templates(server):
        if getattr(template, "name", None) == name:
            from tritonify.kernels.templates.insert import template_insert_edits

            # imports merged (never duplicated), body placed at module level; a snippet where the client takes one
            snippet = _snippet_edits_supported(server) and analysis.version is not None
            edits: list[Any] = [analysis.index.text_edit(e) for e in template_insert_edits(
                analysis.text, template, line, snippet=snippet)]
            if snippet and edits:
                edits[-1] = types.SnippetTextEdit(range=edits[-1].range, snippet=types.StringValue(value=edits[-1].new_text))
            return workspace_edit(server, analysis, edits)
    return None


def _snippet_edits_supported(server: TritonifyServer) -> bool:
    """Snippet edits need documentChanges and `workspace.workspaceEdit.snippetEditSupport` (LSP 3.18)."""
    caps = server.client_capabilities.workspace
    we = caps.workspace_edit if caps else None
    return bool(we and we.document_changes and we.snippet_edit_support)


# ---- the list ------------------------------------------------------------------------------------
def quick_fixes(server: TritonifyServer, analysis: Analysis, finding: Finding) -> list[types.CodeAction]:
    diagnostic = to_diagnostic(finding, analysis.index)
    actions = []
    for i, fix in enumerate(finding.fixes):
        edits = [analysis.index.text_edit(e) for e in fix.edits]
        title = fix.title if fix.applicability == Applicability.SAFE else f"{fix.title} (changes behaviour: review it)"
        actions.append(types.CodeAction(
            title=f"{finding.code}: {title}", kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
            is_preferred=(i == 0 and fix.applicability == Applicability.SAFE) or None,
            edit=workspace_edit(server, analysis, edits)))
    actions.extend(_rule_template_actions(server, analysis, finding, diagnostic))
    edit = noqa_edit(analysis.text, finding.line, finding.code)
    if edit is not None and finding.code != "TRI000" and re.fullmatch(r"[A-Z]+[0-9]+", finding.code):  # noqa understands lint codes only
        actions.append(types.CodeAction(
            title=f"Disable {finding.code} for this line", kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic], edit=workspace_edit(server, analysis, [analysis.index.text_edit(edit)])))
    return actions


def _rule_template_actions(server: TritonifyServer, analysis: Analysis, finding: Finding,
                           diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    """"CODE: Insert template: TITLE" on a finding whose rule names the template that replaces what
    it reports (`Rule.template`); the body goes above the finding's top-level definition."""
    registered = get_rule(finding.code)
    name = registered.rule.template if registered is not None else ""
    if not name or not analysis.parsed_here:
        return []
    template = next((t for t in load_templates(server) if getattr(t, "name", None) == name), None)
    if template is None:
        return []
    title = getattr(template, "title", name)
    data = {"uri": analysis.uri, "version": analysis.version, "action": "template", "name": name,
            "line": finding.line}
    action = types.CodeAction(title=f"{finding.code}: Insert template: {title}", kind=types.CodeActionKind.QuickFix,
                              diagnostics=[diagnostic], data=data)
    if not _resolve_supported(server):
        action.edit = template_edit(server, analysis, name, finding.line)
    return [action]


# ---- benchmark contract ------------------------------------------------------------------------
def _can_create_files(server: TritonifyServer) -> bool:
    caps = server.client_capabilities
    we = caps.workspace.workspace_edit if caps and caps.workspace else None
    return bool(we and we.document_changes and types.ResourceOperationKind.Create in (we.resource_operations or []))


def contract_action(server: TritonifyServer, analysis: Analysis, kernel_name: str,
                    kind: str = RUN_KERNEL) -> types.CodeAction | None:
    """"Write a benchmark contract for KERNEL": a new `<stem>_contract.py` beside the file, from the
    kernel's signature (nothing imported or run). Only when the kernel has no contract and that file
    does not exist yet (then the user edits it), and only for a client that can create files."""
    path = file_path(analysis.uri)
    if path is None or not _can_create_files(server):
        return None
    from tritonify.kernels.bench.scaffold import new_contract

    try:
        dest, text = new_contract(path, kernel_name, analysis.text)
    except ValueError:      # a contract file or contract exists, or the text does not parse
        return None
    uri = dest.as_uri()
    start = types.Position(line=0, character=0)
    edit = types.WorkspaceEdit(document_changes=[
        types.CreateFile(uri=uri, options=types.CreateFileOptions(ignore_if_exists=True)),
        types.TextDocumentEdit(text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                               edits=[types.TextEdit(range=types.Range(start=start, end=start), new_text=text)])])
    return types.CodeAction(title=f"Write a benchmark contract for {kernel_name} ({dest.name})", kind=kind,
                            edit=edit)


async def code_actions(server: TritonifyServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    analysis = await server.current_analysis(params.text_document.uri)
    if analysis is None:
        return []
    only = list(params.context.only or []) if params.context else []
    actions: list[types.CodeAction] = []
    line, _ = analysis.index.code_point(params.range.start)
    lazy = _resolve_supported(server)

    if _wanted(only, types.CodeActionKind.QuickFix):
        feature = server.get_feature(InspectFeature)
        compiled = feature.findings_for(analysis.uri, analysis.text) if feature is not None else []
        for finding in [*analysis.findings, *compiled]:
            rng = analysis.index.range(finding.line, finding.column, finding.end_line, finding.end_column)
            if overlaps(rng, params.range):
                actions.extend(quick_fixes(server, analysis, finding))

    fix_all_kinds = [k for k in (FIX_ALL, QUICK_FIX_ALL) if _wanted(only, k)]
    if fix_all_kinds and not _finding_with_safe_fix_at(analysis, params.range):
        fix_all_kinds = [k for k in fix_all_kinds if k == FIX_ALL]   # Ctrl+. offers it where a fix is
    if fix_all_kinds and _has_safe_fix(analysis):
        data = {"uri": analysis.uri, "version": analysis.version, "action": "fixAll"}
        edit = None if lazy else await fix_all_edit(server, analysis, passes=1)   # without resolve: one quick pass
        for kind in fix_all_kinds:
            if lazy or edit is not None:
                actions.append(types.CodeAction(title=FIX_ALL_TITLE, kind=kind, data=data, edit=edit))

    templates = load_templates(server) if _wanted(only, INSERT_TEMPLATE) else []
    if templates:
        for template in applicable_templates(templates, analysis, line):
            name = getattr(template, "name", "?")
            title = getattr(template, "title", name)
            data = {"uri": analysis.uri, "version": analysis.version, "action": "template", "name": name, "line": line}
            action = types.CodeAction(title=f"Insert template: {title}", kind=INSERT_TEMPLATE, data=data)
            if not lazy:
                action.edit = template_edit(server, analysis, name, line)
            actions.append(action)

    contract_kinds = [k for k in (RUN_KERNEL, QUICK_CONTRACT) if _wanted(only, k)]
    for kernel in analysis.kernels:
        if not kernel.first_line <= line <= kernel.last_line:
            continue
        if _wanted(only, RUN_KERNEL):
            for verb, command in (("Benchmark", "tritonify.benchmark"), ("Profile", "tritonify.profile")):
                actions.append(types.CodeAction(
                    title=f"{verb} this kernel ({kernel.name})", kind=RUN_KERNEL,
                    command=types.Command(title=f"{verb} {kernel.name}", command=command,
                                          arguments=[analysis.uri, kernel.name])))
        for kind in contract_kinds:
            action = contract_action(server, analysis, kernel.name, kind)
            if action is not None:
                actions.append(action)
    return actions


async def resolve(server: TritonifyServer, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    analysis = await server.current_analysis(data.get("uri")) if isinstance(data.get("uri"), str) else None
    if analysis is None or action.edit is not None:
        return action
    if data.get("action") == "fixAll":
        action.edit = await fix_all_edit(server, analysis) or types.WorkspaceEdit(changes={})
    elif data.get("action") == "template" and isinstance(data.get("name"), str) and isinstance(data.get("line"), int):
        action.edit = template_edit(server, analysis, data["name"], data["line"])
    return action


def register(server: TritonifyServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=KINDS, resolve_provider=True))
    @guarded(server, "codeAction", default=list)
    async def on_code_action(params: types.CodeActionParams):
        return await code_actions(server, params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def on_resolve(params: types.CodeAction):
        # guarded by hand: on failure the answer is the action as it came (never null)
        try:
            return await resolve(server, params)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            import traceback

            server.log(types.MessageType.Error, f"codeAction/resolve failed: {exc!r}\n{traceback.format_exc()}")
            return params
