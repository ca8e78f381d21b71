/**
 * The client's side of the typing-latency trace (server/latency_trace.py is the server's): off
 * unless the environment variable TRITONIFY_LATENCY_TRACE names a file, as it does for the
 * server; then each event is one JSON line appended to that file,
 * `{"t": <CLOCK_MONOTONIC seconds>, "pid": ..., "ev": <name>, ...fields}`, on the clock of the
 * server's `time.monotonic()` and of the e2e driver's `process.hrtime` (tests/e2e/typing_latency.js),
 * so one trace orders the key, the extension host, the server and the Problems row.
 *
 * Events: `c.change` (the extension host hands a document change to the client, before it is
 * sent), `c.sent` (written to the server's stdin), `c.diag` (a publishDiagnostics received, before
 * VS Code gets it), `c.diag.set` (handed to VS Code's DiagnosticCollection).
 */
import * as fs from 'fs';

export const TRACE_ENV = 'TRITONIFY_LATENCY_TRACE';

let fd: number | undefined;
let path: string | undefined = process.env[TRACE_ENV] || undefined;

export function tracing(): boolean {
    return path !== undefined;
}

export function traceEvent(name: string, fields: Record<string, unknown> = {}): void {
    if (path === undefined) {
        return;
    }
    try {
        fd ??= fs.openSync(path, 'a');
        const t = Number(process.hrtime.bigint()) / 1e9;
        fs.writeSync(fd, `${JSON.stringify({ t, pid: process.pid, ev: name, ...fields })}\n`);
    } catch {
        path = undefined;   // a trace that cannot be written is dropped, as the server's is
    }
}
