/**
 * Create, start and restart the language client for `<interpreter> bundled/tool/tritonify_server.py server`
 * (commandLine.ts: no workspace folder on the server's sys.path, and none as its working directory).
 *
 * The client is thin: settings go to the server as initialization options and as answers to
 * `workspace/configuration` (made safe by `configurationAnswer`), the server's own commands
 * (`tritonify.benchmark`, `tritonify.profile`, `tritonify.showResult`, `tritonify.showAssembly`,
 * used by its code lenses)
 * are registered by vscode-languageclient, and the middleware only watches them to keep the
 * status item and the results view up to date.
 */
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
    CloseAction,
    DidChangeConfigurationNotification,
    ErrorAction,
    LanguageClient,
    LanguageClientOptions,
    RevealOutputChannelOn,
    ServerOptions,
    State,
    TransportKind,
} from 'vscode-languageclient/node';
import { entryScript, serverCommand, ServerCommand } from './commandLine';
import { runsWorkspaceCode, SERVER_COMMANDS, untrustedMessage } from './contract';
import { log, traceError, traceInfo } from './log';
import { CLIENT_SHOWS_JOB_OUTCOMES, CLIENT_STATES_TRUST, LINT_BUSY_NOTIFICATION, LintBusyParams } from './protocol';
import { LevelledChannel } from './logRouting';
import { OPEN_PAGE_COMMAND, renderedLink, renderedLinks } from './docLinks';
import { InterpreterChoice, interpreterFix, resolveInterpreter } from './python';
import { pythonExtensionInterpreter } from './interpreter';
import { configurationAnswer, ExtensionSettings, readSettings, toServerSettings } from './settings';
import { MANAGE_TRUST, MANAGE_TRUST_COMMAND } from './status';
import { traceEvent, tracing } from './latencyTrace';
import { DiagnosticsShown } from './diagnosticsShown';

export const SERVER_ID = 'tritonify';
export const SERVER_NAME = 'Tritonify';
const CRASHES_BEFORE_GIVING_UP = 4;

/** What the extension needs to know about the running server. */
export interface ServerHandle {
    client: LanguageClient;
    interpreter: InterpreterChoice;
    command: ServerCommand;
    settings: ExtensionSettings;
}

export interface ServerHooks {
    /** A server command (benchmark / profile / showResult / showAssembly) is about to run; returns its completion callback. */
    onCommand(command: string, args: unknown[]): ((result: unknown) => void) | undefined;
    onState(state: 'starting' | 'running' | 'stopped' | 'failed'): void;
    /** The launch command remembered for a kernel (Profile gets it as its third argument). */
    launchCommand?(uri: string, kernel: string): string[] | undefined;
    /** The server's `tritonify/lintBusy` notification (a lint running longer than 300 ms, then done). */
    onLintBusy?(params: LintBusyParams): void;
}

export function currentSettings(): ExtensionSettings {
    const raw = vscode.workspace.getConfiguration('tritonify');
    const { settings, problems } = readSettings({
        interpreter: raw.get('interpreter'),
        importStrategy: raw.get('importStrategy'),
        lint: raw.get('lint'),
        ncuPath: raw.get('ncuPath'),
        benchmark: raw.get('benchmark'),
        jobs: raw.get('jobs'),
        inspect: raw.get('inspect'),
    });
    problems.forEach((p) => log().warn(p));
    return settings;
}

/** The extension's bundled Python libraries, when the .vsix carries them. */
export function bundledLibs(extensionPath: string): string | undefined {
    const libs = path.join(extensionPath, 'bundled', 'libs');
    return fs.existsSync(path.join(libs, 'tritonify')) ? libs : undefined;
}

/**
 * Run the interpreter once before the server: is it Python 3.10+ and can it import the server?
 * Resolves to undefined when it can, else to the reason (last line of its error).
 */
export function preflight(cmd: ServerCommand): Promise<string | undefined> {
    return new Promise((resolve) => {
        execFile(cmd.command, cmd.checkArgs, { env: cmd.env, cwd: cmd.cwd, timeout: 30000 }, (error, _stdout, stderr) => {
            if (!error) {
                resolve(undefined);
                return;
            }
            const lines = String(stderr || error.message).trim().split(/\r?\n/);
            resolve(lines[lines.length - 1] || error.message);
        });
    });
}

export async function showStartFailure(reason: string, fix: string): Promise<void> {
    traceError(`the server could not start: ${reason}. ${fix}`);
    const choice = await vscode.window.showErrorMessage(`Tritonify: the language server could not start: ${reason}. ${fix}`,
        'Open Settings', 'Show Logs');
    if (choice === 'Open Settings') {
        await vscode.commands.executeCommand('workbench.action.openSettings', 'tritonify.interpreter');
    } else if (choice === 'Show Logs') {
        log().show();
    }
}

export async function startServer(extensionPath: string, hooks: ServerHooks): Promise<ServerHandle | undefined> {
    hooks.onState('starting');
    const settings = currentSettings();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const interpreter = resolveInterpreter({
        setting: settings.interpreter,
        pythonExtension: settings.interpreter.length ? undefined : await pythonExtensionInterpreter(folder),
    });
    if (!interpreter) {
        hooks.onState('failed');
        void showStartFailure('no Python interpreter was found', interpreterFix(undefined));
        return undefined;
    }
    const libs = settings.importStrategy === 'useBundled' ? bundledLibs(extensionPath) : undefined;
    const command = serverCommand({ interpreter: interpreter.command, entryScript: entryScript(extensionPath), importStrategy: settings.importStrategy, bundledLibs: libs, ncuPath: settings.ncuPath });
    traceInfo(`interpreter: ${interpreter.command.join(' ')} (from ${interpreter.source}); ` +
        `tritonify from ${libs ? libs : 'the interpreter\'s environment'}`);
    traceInfo(`server: ${command.command} ${command.args.join(' ')}`);
    const failure = await preflight(command);
    if (failure) {
        hooks.onState('failed');
        void showStartFailure(failure, interpreterFix(interpreter));
        return undefined;
    }

    const trusted = () => vscode.workspace.isTrusted;
    const serverOptions: ServerOptions = {
        command: command.command,
        args: command.args,
        options: { env: command.env, cwd: command.cwd },   // never the workspace (commandLine.ts)
        transport: TransportKind.stdio,
    };
    let crashes = 0;
    const shown = new DiagnosticsShown();   // a publication that changes nothing VS Code shows is not handed on
    const clientOptions: LanguageClientOptions = {
        documentSelector: [
            { scheme: 'file', language: 'python' },
            { scheme: 'untitled', language: 'python' },
            { scheme: 'file', language: 'cuda-cpp' },
            { scheme: 'file', pattern: '**/*.{cu,cuh}' },
        ],
        outputChannel: new LevelledChannel(log()),
        traceOutputChannel: new LevelledChannel(log(), 'trace', 'trace', true),
        revealOutputChannelOn: RevealOutputChannelOn.Never,
        initializationOptions: { ...toServerSettings(settings, interpreter.command, trusted()), client: { [CLIENT_SHOWS_JOB_OUTCOMES]: true, [CLIENT_STATES_TRUST]: true } },
        errorHandler: {
            error: () => ({ action: ErrorAction.Continue }),
            closed: () => {
                crashes += 1;
                if (crashes >= CRASHES_BEFORE_GIVING_UP) {
                    hooks.onState('failed');
                    void showStartFailure(`the server stopped ${crashes} times`, 'See Tritonify: Show Logs for why, then run Tritonify: Restart Server.');
                    return { action: CloseAction.DoNotRestart, handled: true };
                }
                traceError(`the server stopped; restarting it (${crashes}/${CRASHES_BEFORE_GIVING_UP})`);
                return { action: CloseAction.Restart, handled: true };
            },
        },
        middleware: {
            // links to the bundled reference pages open rendered (docLinks.ts), in Problems and in hovers
            handleDiagnostics: (uri, diagnostics, next) => {
                traceEvent('c.diag', { n: diagnostics.length });
                for (const d of diagnostics) {
                    if (typeof d.code === 'object' && d.code.target) {
                        const link = renderedLink(d.code.target.toString(true));
                        if (link !== d.code.target.toString(true)) {
                            d.code = { value: d.code.value, target: vscode.Uri.parse(link, true) };
                        }
                    }
                }
                if (!shown.changes(uri.toString(), diagnostics)) {
                    traceEvent('c.diag.same');
                    return;
                }
                next(uri, diagnostics);
                traceEvent('c.diag.set');
            },
            // only while tracing typing latency (latencyTrace.ts): when each change leaves for the server
            ...(tracing() ? {
                didChange: async (event: vscode.TextDocumentChangeEvent, next: (e: vscode.TextDocumentChangeEvent) => Promise<void>) => {
                    traceEvent('c.change', { version: event.document.version });
                    await next(event);
                    traceEvent('c.sent', { version: event.document.version });
                },
            } : {}),
            provideHover: async (document, position, token, next) => {
                const hover = await next(document, position, token);
                if (!hover) {
                    return hover;
                }
                const contents = hover.contents.map((c) => {
                    if (c instanceof vscode.MarkdownString) {
                        const md = new vscode.MarkdownString(renderedLinks(c.value));
                        md.isTrusted = { enabledCommands: [OPEN_PAGE_COMMAND] };
                        return md;
                    }
                    return c;
                });
                return new vscode.Hover(contents, hover.range);
            },
            workspace: {
                configuration: async (params, token, next) => {
                    const answers = await next(params, token);
                    if (!Array.isArray(answers)) {
                        return answers;
                    }
                    return answers.map((answer, i) => params.items[i]?.section === 'tritonify'
                        ? configurationAnswer(answer, interpreter.command, trusted())
                        : answer);
                },
            },
            executeCommand: async (name, args, next) => {
                if (!SERVER_COMMANDS.has(name)) {
                    return next(name, args);
                }
                if (runsWorkspaceCode(name) && !trusted()) {
                    void vscode.window.showWarningMessage(`Tritonify: ${untrustedMessage(name)}; trust the workspace first.`, MANAGE_TRUST)
                        .then((c) => c && vscode.commands.executeCommand(MANAGE_TRUST_COMMAND));
                    return undefined;
                }
                if (name === 'tritonify.profile' && args.length === 2 && typeof args[0] === 'string' && typeof args[1] === 'string') {
                    const launch = hooks.launchCommand?.(args[0], args[1]);
                    if (launch?.length) {
                        args = [...args, launch];
                    }
                }
                const done = hooks.onCommand(name, args);
                try {
                    const result = await next(name, args);
                    done?.(result);
                    return result;
                } catch (error) {
                    done?.(undefined);
                    throw error;
                }
            },
        },
    };
    const client = new LanguageClient(SERVER_ID, SERVER_NAME, serverOptions, clientOptions);
    client.onDidChangeState((e) => {
        shown.clear();   // a restarted server publishes everything again: let it through
        if (e.newState === State.Running) {
            hooks.onState('running');
        } else if (e.newState === State.Stopped) {
            hooks.onState('stopped');
        }
    });
    client.onNotification(LINT_BUSY_NOTIFICATION, (params: LintBusyParams) => hooks.onLintBusy?.(params));
    try {
        await client.start();
    } catch (error) {
        hooks.onState('failed');
        void showStartFailure(error instanceof Error ? error.message : String(error), interpreterFix(interpreter));
        return undefined;
    }
    return { client, interpreter, command, settings };
}

export async function stopServer(handle: ServerHandle | undefined): Promise<void> {
    if (!handle) {
        return;
    }
    try {
        await handle.client.stop(5000);
    } catch (error) {
        traceError('stopping the server failed', error);
    }
    await handle.client.dispose().catch(() => undefined);
}

/** Tell the server the settings changed; it pulls them through workspace/configuration. */
export function notifySettingsChanged(handle: ServerHandle | undefined): void {
    if (handle?.client.isRunning()) {
        void handle.client.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
    }
}
