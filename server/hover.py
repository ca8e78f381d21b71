"""Hover: what the page of `references/` about the thing under the cursor says, in short, and
a link to the whole page.

In order: a diagnostic's rule, a rule code written in the text (`# noqa: TRI001`), a Triton call
(`tl.*`, libdevice, under any alias) that a page is about. On a diagnostic the editor already
shows the Problems row's message: the hover adds the whole message only when the row had to cut
it (diagnostics_feature.row_message), then the page's summary and the link.
"""
from __future__ import annotations

from lsprotocol import types

from tritonify.diagnostics.lookup import Page, api_at, page_summary, pages_for_api, rule_code_at, rule_page
from tritonify.server.app import TritonifyServer, guarded
from tritonify.server.diagnostics_feature import row_message

MAX_PAGE_CHARS = 12000


def _markdown(*parts: str) -> types.Hover:
    text = "\n\n".join(p for p in parts if p)
    if len(text) > MAX_PAGE_CHARS:
        text = text[:MAX_PAGE_CHARS] + "\n\n(page cut; open it for the rest)"
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


async def hover(server: TritonifyServer, params: types.HoverParams) -> types.Hover | None:
    analysis = await server.current_analysis(params.text_document.uri)
    if analysis is None:
        return None
    line, column = analysis.index.code_point(params.position)
    for finding in analysis.findings:
        starts = (finding.line, finding.column) <= (line, column)
        ends = (line, column) <= (finding.end_line, finding.end_column)
        if starts and ends:
            page = rule_page(finding.code)
            detail = finding.message if row_message(finding.message) != finding.message else ""
            return _markdown(f"**{page.title if page else finding.code}**", detail, *_summary(page))
    for diagnostic in _other_diagnostics(server, analysis.uri):   # e.g. the compile's CMP-* findings
        r = diagnostic.range
        if (r.start.line, r.start.character) <= (params.position.line, params.position.character) <= (r.end.line, r.end.character):
            data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
            page = rule_page(str(diagnostic.code)) if diagnostic.code else None
            return _markdown(f"**{page.title if page else diagnostic.code}**", data.get("message", ""), *_summary(page))
    code = rule_code_at(analysis.index.line_text(line), column)
    if code:
        page = rule_page(code)
        if page:
            return _markdown(f"**{page.title}**", *_summary(page))
    api = api_at(analysis.source, line, column) if analysis.parsed_here else None
    if api:
        pages = pages_for_api(api)
        if pages:
            others = ", ".join(f"[{p.title}]({p.url})" for p in pages[1:])
            return _markdown(f"`{api}`: **{pages[0].title}**", *_summary(pages[0]),
                             f"Also about `{api}`: {others}" if others else "")
    return None


def _other_diagnostics(server: TritonifyServer, uri: str) -> list[types.Diagnostic]:
    """What other sources than the lint (the compile's insight) published for `uri`."""
    per_source = server._diagnostics.get(uri, {})
    return [d for source, items in per_source.items() if source != "lint" for d in items]


def _summary(page: Page | None) -> tuple[str, str]:
    if page is None:
        return "", ""
    return page_summary(page), f"[{page.title}: the whole page]({page.url})"


def register(server: TritonifyServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded(server, "hover")
    async def on_hover(params: types.HoverParams):
        return await hover(server, params)
