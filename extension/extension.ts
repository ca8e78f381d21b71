/**
 * Tritonify for VS Code: activate, register the commands, keep one language server running.
 *
 * All behaviour lives in the Python server; this file wires editor events to it: restart
 * (debounced) when the interpreter, the import strategy, the ncu path or workspace trust change,
 * pass other setting changes on, and route the server's results to the status item and the view.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { CODE_ACTION_KINDS } from './contract';
import { ASSEMBLY_SCHEME, AssemblyDocument, assemblyPath, FALLBACK_LANGUAGE, readAssembly } from './assembly';
import { isPage, OPEN_PAGE_COMMAND, ruleRow } from './docLinks';
import { actionButtons, joinCommandLine, launchKey, splitCommandLine } from './nextActions';
import { onPythonInterpreterChanged } from './interpreter';
import { createLog, log, traceError, traceInfo } from './log';
import { openLocation, ResultsView } from './results/view';
import { ResultKind } from './results/render';
import { currentSettings, notifySettingsChanged, ServerHandle, startServer, stopServer } from './server';
import { RESTART_KEYS } from './settings';
import { MANAGE_TRUST, MANAGE_TRUST_COMMAND, RunningJob, ServerStatus } from './status';

const RESTART_DEBOUNCE_MS = 750;
const RUN_KERNEL_KIND = CODE_ACTION_KINDS.runKernel;
const INSERT_TEMPLATE_KIND = CODE_ACTION_KINDS.insertTemplate;
const DIAGNOSTIC_SOURCE = 'tritonify';   // the server's Diagnostic.source

let server: ServerHandle | undefined;
let restartTimer: ReturnType<typeof setTimeout> | undefined;
let restarting: Promise<void> = Promise.resolve();

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    context.subscriptions.push(createLog());
    const status = new ServerStatus(vscode.window.createStatusBarItem('tritonify.status', vscode.StatusBarAlignment.Right, 100));
    const results = new ResultsView();
    context.subscriptions.push(status, results);

    const hooks = {
        onState: (state: 'starting' | 'running' | 'stopped' | 'failed') =>
            status.setState(state === 'running' && !vscode.workspace.isTrusted ? 'untrusted' : state),
        onLintBusy: (params: { uri: string; busy: boolean }) => status.lintBusy(params.uri, params.busy),
        launchCommand: (uri: string, kernel: string) => context.workspaceState.get<string[]>(launchKey(uri, kernel)),
        onCommand: (command: string, args: unknown[]) => {
            const [, kernel, kindArg] = args as [unknown, unknown, unknown];
            const kernelName = typeof kernel === 'string' ? kernel : 'kernel';
            if (command === 'tritonify.showAssembly') {
                return (answer: unknown) => {
                    const read = readAssembly(answer);
                    if ('error' in read) {
                        void vscode.window.showWarningMessage(`Tritonify: ${read.error}`);
                    } else {
                        void openAssembly(read.document);
                    }
                };
            }
            if (command === 'tritonify.inspect' || command === 'tritonify.inspectWithDefinitions') {
                return (answer: unknown) => {
                    const a = (answer ?? {}) as { ok?: boolean; message?: unknown; error?: unknown; actions?: unknown };
                    if (a.ok) {
                        vscode.window.setStatusBarMessage(`Tritonify: ${String(a.message ?? `${kernelName} compiled`)}`, 10000);
                    } else {   // the server names the next action (Choose Interpreter when triton is missing)
                        void tellOutcome(context, false, String(a.error ?? a.message ?? `${kernelName} was not compiled`),
                            a.actions ?? ['openLog'], typeof args[0] === 'string' ? args[0] : '', kernelName);
                    }
                };
            }
            if (command === 'tritonify.showResult') {
                return (result: unknown) => {
                    const kind: ResultKind = kindArg === 'profile' ? 'profile' : 'benchmark';
                    if (result) {
                        results.show(kind, result, kernelName);
                    } else {
                        const again = kind === 'profile' ? 'Profile' : 'Benchmark';
                        void vscode.window.showInformationMessage(`Tritonify: no ${kind} result of ${kernelName} to show.`, again)
                            .then((c) => c && vscode.commands.executeCommand(`tritonify.${kind}`, args[0], kernelName));
                    }
                };
            }
            const job: RunningJob = { kind: command === 'tritonify.profile' ? 'profile' : 'benchmark', kernel: kernelName, startedAt: Date.now() };
            status.jobStarted(job);
            const uri = typeof args[0] === 'string' ? args[0] : '';
            return (outcome: unknown) => {
                status.jobEnded(job);
                const o = outcome as { ok?: boolean; result?: unknown; message?: unknown; actions?: unknown } | undefined;
                if (o?.ok && o.result !== undefined && currentSettings().benchmark.openResults) {
                    results.show(job.kind, o.result, kernelName);
                }
                if (o && typeof o.message === 'string') {
                    void tellOutcome(context, Boolean(o.ok), o.message, o.actions, uri, kernelName);
                }
            };
        },
    };

    const restart = (why: string) => {
        if (restartTimer) {
            clearTimeout(restartTimer);
        }
        restartTimer = setTimeout(() => {
            restartTimer = undefined;
            restarting = restarting.then(async () => {
                traceInfo(`(re)starting the server: ${why}`);
                await stopServer(server);
                server = await startServer(context.extensionPath, hooks);
            }).catch((error) => traceError('restarting the server failed', error));
        }, RESTART_DEBOUNCE_MS);
    };

    context.subscriptions.push(
        vscode.commands.registerCommand('tritonify.restart', () => restart('Restart Server command')),
        vscode.commands.registerCommand('tritonify.showLogs', () => log().show()),
        vscode.commands.registerCommand('tritonify.benchmarkKernel', () => runKernel('tritonify.benchmark')),
        vscode.commands.registerCommand('tritonify.profileKernel', () => runKernel('tritonify.profile')),
        vscode.commands.registerCommand('tritonify.insertTemplate', insertTemplate),
        vscode.commands.registerCommand('tritonify.openRuleDocs', openRuleDocs),
        vscode.commands.registerCommand('tritonify.openLocation', openLocation),
        vscode.commands.registerCommand(OPEN_PAGE_COMMAND, openPage),
        vscode.commands.registerCommand('tritonify.chooseInterpreter', chooseInterpreter),
        vscode.workspace.registerTextDocumentContentProvider(ASSEMBLY_SCHEME, listings),
        vscode.workspace.onDidChangeConfiguration((e) => {
            if (RESTART_KEYS.some((key) => e.affectsConfiguration(key))) {
                restart('settings changed');
            } else if (e.affectsConfiguration('tritonify')) {
                notifySettingsChanged(server);
            }
        }),
        vscode.workspace.onDidGrantWorkspaceTrust(() => restart('workspace trusted')),
    );   // the server itself is stopped by deactivate()
    const pythonWatch = await onPythonInterpreterChanged(() => {
        if (currentSettings().interpreter.length === 0) {
            restart('the Python extension\'s interpreter changed');
        }
    });
    if (pythonWatch) {
        context.subscriptions.push(pythonWatch);
    }
    restart('activation');
    await restarting;
}

export async function deactivate(): Promise<void> {
    if (restartTimer) {
        clearTimeout(restartTimer);
    }
    await restarting;
    await stopServer(server);
    server = undefined;
}

/** A job's outcome (the server leaves showing it to this client), with its next actions as buttons. */
async function tellOutcome(context: vscode.ExtensionContext, ok: boolean, message: string, actions: unknown,
    uri: string, kernel: string): Promise<void> {
    const buttons = actionButtons(actions);
    const show = ok ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
    const pick = await show(`Tritonify: ${message}`, ...buttons.map((b) => b.label));
    const chosen = buttons.find((b) => b.label === pick);
    if (!chosen) {
        return;
    }
    if (chosen.id === 'openLog') {
        log().show();
    } else if (chosen.id === 'chooseInterpreter') {
        await chooseInterpreter();
    } else if (chosen.id === 'setNcuPath') {
        await vscode.commands.executeCommand('workbench.action.openSettings', 'tritonify.ncuPath');
    } else if (chosen.id === 'writeContract') {
        await writeContract(uri, kernel);
    } else if (chosen.id === 'setLaunchCommand') {
        await setLaunchCommand(context, uri, kernel);
    } else if (chosen.id === 'runWithInterpreter') {   // no GPU here: check correctness on the CPU (bench --interpret)
        await vscode.commands.executeCommand('tritonify.benchmark', uri, kernel, { interpret: true });
    }
}

/** The Python the server and its jobs use: the Python extension's picker when it is installed, else the setting. */
async function chooseInterpreter(): Promise<void> {
    const python = vscode.extensions.getExtension('ms-python.python');
    if (python) {
        await vscode.commands.executeCommand('python.setInterpreter');
    } else {
        await vscode.commands.executeCommand('workbench.action.openSettings', 'tritonify.interpreter');
    }
}

/** The server's "Write a benchmark contract" action for `kernel`, applied, and the new file opened. */
async function writeContract(uri: string, kernel: string): Promise<void> {
    const doc = vscode.Uri.parse(uri);
    const lenses = (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc)) ?? [];
    const lens = lenses.find((l) => l.command?.arguments?.[1] === kernel);
    const at = lens ? new vscode.Range(lens.range.start.line + 1, 0, lens.range.start.line + 1, 0) : new vscode.Range(0, 0, 0, 0);
    const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', doc, at,
        CODE_ACTION_KINDS.writeContract)) ?? [];
    const action = actions.find((a) => a.title.startsWith('Write a benchmark contract'));
    if (!action?.edit) {
        void vscode.window.showWarningMessage(`Tritonify: no contract can be written for ${kernel} here (it may have one already).`, 'Open Log')
            .then((c) => c && log().show());
        return;
    }
    await vscode.workspace.applyEdit(action.edit);
    const created = action.edit.entries().map(([u]) => u).find((u) => u.toString() !== doc.toString());
    if (created) {
        // saved at once, as `tritonify bench --write-contract` writes it: the next Benchmark finds it
        const contract = await vscode.workspace.openTextDocument(created);
        await contract.save();
        await vscode.window.showTextDocument(contract);
    }
}

/** An input box for the command that launches `kernel`; remembered per kernel in the workspace, then Profile runs with it. */
async function setLaunchCommand(context: vscode.ExtensionContext, uri: string, kernel: string): Promise<void> {
    const key = launchKey(uri, kernel);
    const before = context.workspaceState.get<string[]>(key);
    const typed = await vscode.window.showInputBox({
        title: `Tritonify: the command that launches ${kernel}`,
        prompt: 'Profile runs it under Nsight Compute from the file\'s folder (no shell), e.g. python bench.py --n 4096',
        value: before ? joinCommandLine(before) : 'python ',
        validateInput: (line) => {
            const split = splitCommandLine(line);
            return 'error' in split ? split.error : undefined;
        },
    });
    if (typed === undefined) {
        return;
    }
    const split = splitCommandLine(typed);
    if ('error' in split) {
        return;
    }
    await context.workspaceState.update(key, split.argv);
    await vscode.commands.executeCommand('tritonify.profile', uri, kernel);
}

/** The read-only listing documents (`tritonify-asm:` URIs): their text, kept while the extension runs. */
class Listings implements vscode.TextDocumentContentProvider {
    private readonly texts = new Map<string, string>();
    private readonly changed = new vscode.EventEmitter<vscode.Uri>();
    readonly onDidChange = this.changed.event;

    set(uri: vscode.Uri, text: string): void {
        this.texts.set(uri.toString(), text);
        this.changed.fire(uri);
    }

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.texts.get(uri.toString()) ?? '(this listing is gone: click its code lens again)';
    }
}

const listings = new Listings();

/** A compiled config's SASS / PTX in a read-only tab of its own scheme, in its language mode. */
async function openAssembly(listing: AssemblyDocument): Promise<void> {
    const kind = listing.language === 'ptx' ? 'ptx' : 'sass';
    const uri = vscode.Uri.from({ scheme: ASSEMBLY_SCHEME, path: assemblyPath(listing.title, kind) });
    listings.set(uri, listing.content);
    let doc = await vscode.workspace.openTextDocument(uri);
    try {
        doc = await vscode.languages.setTextDocumentLanguage(doc, listing.language);
    } catch {
        doc = await vscode.languages.setTextDocumentLanguage(doc, FALLBACK_LANGUAGE).then((d) => d, () => doc);
    }
    await vscode.window.showTextDocument(doc, { preview: true });
    vscode.window.setStatusBarMessage(`Tritonify: ${listing.title}`, 10000);
}

/** A reference page (a link in Problems or a hover, docLinks.ts) opened rendered. */
async function openPage(page: unknown): Promise<void> {
    if (!isPage(page) || !fs.existsSync(page)) {
        void vscode.window.showWarningMessage(`Tritonify: no such page: ${String(page)}`);
        return;
    }
    await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(page));
}

/** Benchmark / Profile from the palette: the kernel under the cursor, else a pick from the file's kernels. */
async function runKernel(command: 'tritonify.benchmark' | 'tritonify.profile'): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
        void vscode.window.showInformationMessage('Tritonify: open a file with a Triton kernel first.');
        return;
    }
    if (!vscode.workspace.isTrusted) {
        void vscode.window.showWarningMessage('Tritonify: Benchmark and Profile run this workspace\'s code; trust the workspace first.', MANAGE_TRUST)
            .then((c) => c && vscode.commands.executeCommand(MANAGE_TRUST_COMMAND));
        return;
    }
    if (editor.document.isDirty) {
        await editor.document.save();
    }
    const lenses = (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', editor.document.uri)) ?? [];
    const kernels = lenses.filter((l) => l.command?.command === command);
    if (kernels.length === 0) {
        void vscode.window.showInformationMessage('Tritonify: no Triton kernel found in this file.');
        return;
    }
    const cursor = editor.selection.active.line;
    let chosen = [...kernels].reverse().find((l) => l.range.start.line <= cursor);
    if (!chosen) {
        const pick = await vscode.window.showQuickPick(kernels.map((l) => ({ label: String(l.command?.arguments?.[1] ?? '?'), lens: l })),
            { placeHolder: 'Which kernel?' });
        chosen = pick?.lens;
    }
    if (chosen?.command) {
        await vscode.commands.executeCommand(chosen.command.command, ...(chosen.command.arguments ?? []));
    }
}

/** The server's "Insert template" code actions at the cursor, picked from a list and applied. */
async function insertTemplate(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
        void vscode.window.showInformationMessage('Tritonify: open a Python file to insert a template into.');
        return;
    }
    const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider',
        editor.document.uri, editor.selection, INSERT_TEMPLATE_KIND, 50)) ?? [];
    const templates = actions.filter((a) => a.kind?.value.startsWith(INSERT_TEMPLATE_KIND));
    if (templates.length === 0) {
        void vscode.window.showInformationMessage('Tritonify: no template applies here (templates are offered in Python files, outside kernels).');
        return;
    }
    const pick = await vscode.window.showQuickPick(templates.map((a) => ({ label: a.title.replace(/^Insert template: /, ''), action: a })),
        { placeHolder: 'Insert which template?' });
    if (pick?.action.edit) {
        await vscode.workspace.applyEdit(pick.action.edit);
    } else if (pick) {
        void vscode.window.showWarningMessage('Tritonify: the server gave no text for this template.', 'Open Log')
            .then((c) => c && log().show());
    }
}

/** The rule page of the Tritonify finding under the cursor, else a pick from the rules found. */
async function openRuleDocs(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const pages = new Map<string, vscode.Uri>();
    const add = (d: vscode.Diagnostic) => {
        if (d.source?.toLowerCase() === DIAGNOSTIC_SOURCE && typeof d.code === 'object' && d.code.target) {
            pages.set(String(d.code.value), d.code.target);
        }
    };
    if (editor) {
        const here = vscode.languages.getDiagnostics(editor.document.uri).filter((d) => d.range.contains(editor.selection.active));
        here.forEach(add);
        if (pages.size === 1) {
            return openDoc([...pages.values()][0]);
        }
    }
    for (const [, diagnostics] of vscode.languages.getDiagnostics()) {
        diagnostics.forEach(add);
    }
    const rulesDir = findRulesDir();
    if (rulesDir) {
        for (const file of fs.readdirSync(rulesDir).filter((f) => f.endsWith('.md'))) {
            const code = file.replace(/\.md$/, '');
            if (!pages.has(code)) {
                pages.set(code, vscode.Uri.file(path.join(rulesDir, file)));
            }
        }
    }
    if (pages.size === 0) {
        void vscode.window.showInformationMessage('Tritonify: no rule pages found; they open from a finding\'s code in the Problems panel.');
        return;
    }
    const rows = [...pages.keys()].sort().map((code) => {
        const page = pages.get(code)!;
        let text = '';
        try {
            text = page.scheme === 'file' ? fs.readFileSync(page.fsPath, 'utf-8') : '';
        } catch {
            text = '';
        }
        return ruleRow(code, text);
    });
    const pick = await vscode.window.showQuickPick(rows, { placeHolder: 'Open the page of which rule?', matchOnDescription: true });
    if (pick) {
        await openDoc(pages.get(pick.label)!);
    }
}

function findRulesDir(): string | undefined {
    const ext = vscode.extensions.getExtension('tritonify.tritonify');
    const dir = ext ? path.join(ext.extensionPath, 'bundled', 'libs', 'tritonify', 'references', 'rules') : undefined;
    return dir && fs.existsSync(dir) ? dir : undefined;
}

async function openDoc(uri: vscode.Uri): Promise<void> {
    if (uri.scheme === 'file' && uri.fsPath.endsWith('.md')) {
        await vscode.commands.executeCommand('markdown.showPreview', uri);
    } else {
        await vscode.env.openExternal(uri);
    }
}
