/**
 * The "Tritonify" log output channel, shared by the client and the language server (the server's
 * window/logMessage lines land here too), so "Show Logs" shows one story in order.
 */
import * as vscode from 'vscode';

let channel: vscode.LogOutputChannel | undefined;

export function createLog(): vscode.LogOutputChannel {
    channel ??= vscode.window.createOutputChannel('Tritonify', { log: true });
    return channel;
}

export function log(): vscode.LogOutputChannel {
    return createLog();
}

export function traceInfo(message: string): void {
    log().info(message);
}

export function traceWarn(message: string): void {
    log().warn(message);
}

export function traceError(message: string, error?: unknown): void {
    const detail = error instanceof Error ? `: ${error.message}` : error !== undefined ? `: ${String(error)}` : '';
    log().error(message + detail);
}
