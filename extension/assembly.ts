/**
 * The answer of the server's `tritonify.showAssembly` (a compiled config's SASS or PTX, asked for
 * by clicking its code lens), checked before it is opened in an editor tab.
 *
 * Pure (no `vscode` import) so it is unit-tested without an editor; extension.ts opens the
 * document. The server answers `{title, language, content}`, or `{error}` with the reason.
 */

export interface AssemblyDocument {
    title: string;
    language: string;
    content: string;
}

/** Language ids VS Code always knows; any other id falls back to the first. */
export const FALLBACK_LANGUAGE = 'plaintext';

/** The document to open, or the message to show instead. */
export function readAssembly(answer: unknown): { document: AssemblyDocument } | { error: string } {
    if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) {
        return { error: 'the server sent no listing (see Tritonify: Show Logs)' };
    }
    const a = answer as Record<string, unknown>;
    if (typeof a.error === 'string') {
        return { error: a.error };
    }
    if (typeof a.content !== 'string' || a.content.length === 0) {
        return { error: 'the server sent an empty listing' };
    }
    return {
        document: {
            title: typeof a.title === 'string' && a.title ? a.title : 'Tritonify listing',
            language: typeof a.language === 'string' && /^[\w.-]+$/.test(a.language) ? a.language : FALLBACK_LANGUAGE,
            content: a.content,
        },
    };
}
