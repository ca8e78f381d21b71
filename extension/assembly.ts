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

/** The URI scheme of the read-only listing documents (a TextDocumentContentProvider serves them). */
export const ASSEMBLY_SCHEME = 'tritonify-asm';
/** The language modes package.json contributes for them. */
export const LISTING_LANGUAGE: Record<string, string> = { sass: 'tritonify-sass', ptx: 'ptx' };

/** Where a listing opens: one read-only document per kernel, variant and kind, named by its title. */
export function assemblyPath(title: string, kind: string): string {
    const name = title.replace(/[\/:*?"<>|#%\s]+/g, '_').replace(/_+/g, '_').replace(/^_|_$/g, '') || 'listing';
    return `/${name}.${kind === 'ptx' ? 'ptx' : 'sass'}`;
}

/** The compile's scratch folders (`/tmp/tritonify-inspect-*`) left out of a listing: the file's name is what it means. */
export function withoutTempPaths(content: string): string {
    return content.replace(/(?:[A-Za-z]:)?[^\s"'()]*[\/]tritonify-inspect-[^\/\s"']+[\/]((?:[^\s"':()]+[\/])*)([^\s"':()\/]+)/g, '$2');
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
    const kind = typeof a.kind === 'string' ? a.kind : '';
    const language = LISTING_LANGUAGE[kind]
        ?? (typeof a.language === 'string' && /^[\w.-]+$/.test(a.language) ? a.language : FALLBACK_LANGUAGE);
    return {
        document: {
            title: typeof a.title === 'string' && a.title ? a.title : 'Tritonify listing',
            language,
            content: withoutTempPaths(a.content),
        },
    };
}
