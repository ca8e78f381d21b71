"""Hover: the page of `references/` that explains what is under the cursor.

In order: a diagnostic's rule (its message, then its page), a rule code written in the text
(`# noqa: TRI001`), a Triton call (`tl.*`, libdevice, under any alias) that a page is about.
"""
from __future__ import annotations

from lsprotocol import types

from tritonify.diagnostics.lookup import api_at, pages_for_api, rule_code_at, rule_page
from tritonify.server.app import TritonifyServer, guarded

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
            link = f"[{finding.code} reference]({page.url})" if page else ""
            return _markdown(f"**{finding.code}** {finding.message}", link, page.text if page else "")
    code = rule_code_at(analysis.index.line_text(line), column)
    if code:
        page = rule_page(code)
        if page:
            return _markdown(page.text, f"[open the page]({page.url})")
    api = api_at(analysis.source, line, column) if analysis.parsed_here else None
    if api:
        pages = pages_for_api(api)
        if pages:
            others = ", ".join(f"[{p.title}]({p.url})" for p in pages[1:])
            return _markdown(f"`{api}`", pages[0].text, f"Also about `{api}`: {others}" if others else "")
    return None


def register(server: TritonifyServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded(server, "hover")
    async def on_hover(params: types.HoverParams):
        return await hover(server, params)
