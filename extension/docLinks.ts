/**
 * Links to Tritonify's bundled reference pages (file:// URIs to `references/**.md` that the
 * server puts in a diagnostic's code link and in hovers) opened rendered: they become
 * `command:tritonify.openPage` links, and the command opens the Markdown preview of the page.
 * Pure (no `vscode` import), so it is unit-tested; server.ts rewrites, extension.ts opens.
 */
export const OPEN_PAGE_COMMAND = 'tritonify.openPage';

/** The local path of a file:// link to a Markdown page, else undefined. */
export function pagePath(href: string): string | undefined {
    if (!href.startsWith('file://') || !/\.md(#.*)?$/.test(href)) {
        return undefined;
    }
    try {
        const url = new URL(href);
        return decodeURIComponent(url.pathname);
    } catch {
        return undefined;
    }
}

/** The command link that opens the page rendered, for a file:// link to a page; else the link as it was. */
export function renderedLink(href: string): string {
    const page = pagePath(href);
    return page ? `command:${OPEN_PAGE_COMMAND}?${encodeURIComponent(JSON.stringify([page]))}` : href;
}

/** Markdown with each `](file:///....md)` link target made a rendered-page link. */
export function renderedLinks(markdown: string): string {
    return markdown.replace(/\]\((file:\/\/[^)\s]+\.md(?:#[^)\s]*)?)\)/g, (_, href: string) => `](${renderedLink(href)})`);
}

/** Whether `path` may be opened by the command: a Markdown file (the link's only job). */
export function isPage(path: unknown): path is string {
    return typeof path === 'string' && path.endsWith('.md') && !path.includes('\0');
}

/** A rule page's row in the rule-docs picker: its code, and its name and summary from the page's first lines. */
export function ruleRow(code: string, markdown: string): { label: string; description?: string; detail?: string } {
    const lines = markdown.split(/\r?\n/);
    const heading = lines.find((l) => l.startsWith('# '));
    const name = heading ? heading.slice(2).trim().replace(new RegExp(`^${code}\\b[:\\s]*`), '').trim() : '';
    const what = lines.findIndex((l) => /^## What it detects/.test(l));
    const summary = what >= 0 ? lines.slice(what + 1).find((l) => l.trim().length > 0)?.trim() : undefined;
    return { label: code, ...(name ? { description: name } : {}), ...(summary ? { detail: summary.slice(0, 200) } : {}) };
}
