/**
 * What VS Code shows of each document's Tritonify diagnostics, so that a publication that would
 * change nothing is not handed to VS Code.
 *
 * While typing, the server publishes each version it lints (the first answer, the whole one, the
 * debounced syntax error of a half-typed line), and most of these carry the very findings already
 * shown: only the version differs. VS Code does not look at the version; each
 * DiagnosticCollection.set still goes to the workbench, where the markers are made anew, every
 * squiggle of the document is removed and decorated again, and the Problems panel's 64 ms
 * debounce of marker changes starts over (so a publication just before the one that matters
 * holds that one's row back). Handing VS Code only the publications that change something keeps
 * the protocol as it is (every version is still published, for every client) and the display the
 * same: the collection already holds exactly those diagnostics.
 *
 * Pure (no `vscode` import): a diagnostic is compared by everything VS Code shows or hands to a
 * code action (range, severity, message, source, code and its link, tags, related information,
 * and vscode-languageclient's `data`, which carries the fixes).
 */

interface PositionLike { line: number; character: number }
interface RangeLike { start: PositionLike; end: PositionLike }
interface UriLike { toString(skipEncoding?: boolean): string }

export interface DiagnosticLike {
    range: RangeLike;
    message: string;
    severity?: number;
    source?: string;
    code?: string | number | { value: string | number; target: UriLike };
    tags?: readonly number[];
    relatedInformation?: readonly { location: { uri: UriLike; range: RangeLike }; message: string }[];
    data?: unknown;
}

function rangeKey(r: RangeLike): number[] {
    return [r.start.line, r.start.character, r.end.line, r.end.character];
}

/** Everything about `d` that VS Code shows or uses, as one string. */
export function diagnosticKey(d: DiagnosticLike): string {
    const code = typeof d.code === 'object' && d.code !== null ? [d.code.value, d.code.target.toString()] : d.code;
    const related = (d.relatedInformation ?? []).map((r) => [r.location.uri.toString(), rangeKey(r.location.range), r.message]);
    return JSON.stringify([rangeKey(d.range), d.severity, d.message, d.source, code, d.tags ?? [], related, d.data ?? null]);
}

export class DiagnosticsShown {
    private readonly shown = new Map<string, string>();   // document URI -> the key of what VS Code holds

    /**
     * Record `diagnostics` as what `uri` shows; false when it shows exactly these already (the
     * publication changes nothing and need not reach VS Code).
     */
    changes(uri: string, diagnostics: readonly DiagnosticLike[]): boolean {
        const key = `${diagnostics.length}\u0000${diagnostics.map(diagnosticKey).join('\u0000')}`;
        if (this.shown.get(uri) === key) {
            return false;
        }
        this.shown.set(uri, key);
        return true;
    }

    /** Forget everything (the server restarted, or the collection was cleared): the next publication of each document goes through. */
    clear(): void {
        this.shown.clear();
    }
}
