/**
 * A failed Benchmark or Profile offers its next action as a button: the server names them
 * (`outcome.actions`, ids of contract/protocol.json's jobActions), the client shows and runs them
 * (extension.ts). Pure (no `vscode` import): unit-tested.
 */
import { JOB_ACTIONS } from './protocol';

export interface ActionButton {
    id: string;
    label: string;
}

/** The buttons of an outcome's `actions`, known ids only, in the server's order. */
export function actionButtons(actions: unknown): ActionButton[] {
    if (!Array.isArray(actions)) {
        return [];
    }
    return actions.filter((a): a is string => typeof a === 'string' && a in JOB_ACTIONS)
        .map((id) => ({ id, label: JOB_ACTIONS[id] }));
}

/** Where a kernel's launch command is remembered (VS Code's workspace state). */
export function launchKey(uri: string, kernel: string): string {
    return `tritonify.launchCommand:${uri}::${kernel}`;
}

/**
 * A launch command typed in the input box, as the argument list the server runs (never through
 * a shell): words split at spaces, "double" or 'single' quotes keep spaces, a backslash escapes
 * the next character outside single quotes.
 */
export function splitCommandLine(line: string): { argv: string[] } | { error: string } {
    const argv: string[] = [];
    let word = '';
    let inWord = false;
    let quote: '"' | "'" | undefined;
    for (let i = 0; i < line.length; i++) {
        const c = line[i];
        if (quote) {
            if (c === quote) {
                quote = undefined;
            } else if (c === '\\' && quote === '"' && i + 1 < line.length) {
                word += line[++i];
            } else {
                word += c;
            }
        } else if (c === '"' || c === "'") {
            quote = c;
            inWord = true;
        } else if (c === '\\' && i + 1 < line.length) {
            word += line[++i];
            inWord = true;
        } else if (/\s/.test(c)) {
            if (inWord) {
                argv.push(word);
            }
            word = '';
            inWord = false;
        } else {
            word += c;
            inWord = true;
        }
    }
    if (quote) {
        return { error: `an opening ${quote} has no closing one` };
    }
    if (inWord) {
        argv.push(word);
    }
    return argv.length ? { argv } : { error: 'type the command that runs the kernel, e.g. python bench.py' };
}

/** The remembered argument list shown back in the input box. */
export function joinCommandLine(argv: string[]): string {
    return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'"'"'`)}'`)).join(' ');
}
