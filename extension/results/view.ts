/**
 * The results view: one webview panel that shows the latest Benchmark or Profile result the
 * server returned. It runs no script; links are `command:tritonify.openLocation` URIs.
 */
import * as crypto from 'crypto';
import * as path from 'path';
import * as vscode from 'vscode';
import { renderResult, ResultKind } from './render';

export class ResultsView {
    private panel: vscode.WebviewPanel | undefined;

    show(kind: ResultKind, result: unknown, kernel: string): void {
        const roots = reportFolders(result);
        if (!this.panel) {
            this.panel = vscode.window.createWebviewPanel('tritonify.results', 'Tritonify results', vscode.ViewColumn.Beside, {
                enableScripts: false,
                enableCommandUris: ['tritonify.openLocation'],
                localResourceRoots: roots,
            });
            this.panel.onDidDispose(() => (this.panel = undefined));
        } else {
            this.panel.webview.options = { ...this.panel.webview.options, localResourceRoots: roots };
            this.panel.reveal(vscode.ViewColumn.Beside, true);
        }
        const webview = this.panel.webview;
        this.panel.title = `Tritonify ${kind}: ${kernel}`;
        webview.html = renderResult(kind, result, {
            nonce: crypto.randomBytes(16).toString('base64'),
            cspSource: webview.cspSource,
            resourceUri: (file) => webview.asWebviewUri(vscode.Uri.file(file)).toString(),
        });
    }

    dispose(): void {
        this.panel?.dispose();
    }
}

/** The folders of the report files a result names (the PNG chart is shown from there). */
function reportFolders(result: unknown): vscode.Uri[] {
    const reports = (result as { reports?: Record<string, unknown> } | undefined)?.reports;
    const files = reports ? Object.values(reports).filter((v): v is string => typeof v === 'string' && path.isAbsolute(v)) : [];
    return [...new Set(files.map((f) => path.dirname(f)))].map((d) => vscode.Uri.file(d));
}

/** tritonify.openLocation: a source line in an editor, a report in the browser. */
export async function openLocation(file: unknown, line?: unknown): Promise<void> {
    if (typeof file !== 'string' || !file) {
        return;
    }
    const uri = vscode.Uri.file(file);
    if (/\.(html?|ncu-rep|png)$/i.test(file)) {
        await vscode.env.openExternal(uri);
        return;
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    const lineNo = typeof line === 'number' && line >= 1 ? Math.min(line - 1, doc.lineCount - 1) : 0;
    const pos = new vscode.Position(lineNo, 0);
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos), viewColumn: vscode.ViewColumn.One });
}
