/**
 * What vscode-languageclient 9 writes to its output channel, at the level it means.
 *
 * The client writes the server's window/logMessage lines as `[Error - 10:01:02 AM] text` with
 * `appendLine`, and the server's stderr in chunks with `append`: given a LogOutputChannel, every
 * line would read `[info]`. `levelOf` reads the level back (pure, unit-tested); `LevelledChannel`
 * is the OutputChannel handed to the client, writing each line once, at its level.
 */
import type { LogOutputChannel, OutputChannel, ViewColumn } from 'vscode';

export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const CLIENT_LINE = /^\[(Trace|Debug|Info|Warn|Error)\s*-\s*[^\]]*\]\s?([\s\S]*)$/;
// the server's own Python logging format: "2026-12-01 11:02:03,456 WARNING tritonify.server: text"
const PYTHON_LINE = /^\S+ \S+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) ([\s\S]*)$/;
const PYTHON_LEVEL: Record<string, Level> = { DEBUG: 'debug', INFO: 'info', WARNING: 'warn', ERROR: 'error', CRITICAL: 'error' };

// the client's line when the server process ends; with code 0 it ended as asked (a restart, a stop)
const CLEAN_EXIT = /^Server process exited with code 0\.?$/;

/** The level and the text of one line the client or the server's stderr wrote. */
export function levelOf(line: string, fallback: Level = 'info'): { level: Level; text: string } {
    const client = CLIENT_LINE.exec(line);
    if (client) {
        const level = client[1].toLowerCase() as Level;
        return { level: level === 'error' && CLEAN_EXIT.test(client[2].trim()) ? 'info' : level, text: client[2] };
    }
    const python = PYTHON_LINE.exec(line);
    if (python) {
        return { level: PYTHON_LEVEL[python[1]], text: python[2] };
    }
    return { level: fallback, text: line };
}

/** Splits `append` chunks into whole lines (a chunk may end mid-line). */
export class LineBuffer {
    private rest = '';

    push(chunk: string): string[] {
        const parts = (this.rest + chunk).split(/\r?\n/);
        this.rest = parts.pop() ?? '';
        return parts.filter((p) => p.length > 0);
    }
}

export class LevelledChannel implements OutputChannel {
    private readonly buffer = new LineBuffer();

    /** `chunkLevel`: the level of what arrives through `append` (the server's stderr);
     * `traceAsInfo`: for the trace channel (`tritonify.trace.server`): the user asked for those
     * lines, so they show at the channel's default level. */
    constructor(private readonly target: LogOutputChannel, private readonly chunkLevel: Level = 'warn',
        private readonly lineLevel: Level = 'info', private readonly traceAsInfo = false) {}

    get name(): string {
        return this.target.name;
    }

    private write(level: Level, text: string): void {
        this.target[level === 'trace' && this.traceAsInfo ? 'info' : level](text);
    }

    append(value: string): void {
        for (const line of this.buffer.push(value)) {
            const { level, text } = levelOf(line, this.chunkLevel);
            this.write(level, text);
        }
    }

    appendLine(value: string): void {
        const { level, text } = levelOf(value, this.lineLevel);
        this.write(level, text);
    }

    replace(value: string): void {
        this.appendLine(value);
    }

    clear(): void {
        this.target.clear();
    }

    show(columnOrPreserve?: ViewColumn | boolean, preserveFocus?: boolean): void {
        if (typeof columnOrPreserve === 'boolean') {
            this.target.show(columnOrPreserve);
        } else {
            this.target.show(columnOrPreserve, preserveFocus);
        }
    }

    hide(): void {
        this.target.hide();
    }

    dispose(): void {
        // the LogOutputChannel belongs to the extension (log.ts), not to one language client
    }
}
