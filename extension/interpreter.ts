/**
 * The editor's side of interpreter resolution: the Python extension's selected environment (when
 * that extension is installed) and its change event. The order itself lives in python.ts.
 */
import * as vscode from 'vscode';
import { traceWarn } from './log';

const PYTHON_EXTENSION = 'ms-python.python';

interface PythonEnvironmentsApi {
    environments?: {
        getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
        resolveEnvironment(env: { path: string } | string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
        onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
    };
    settings?: {
        getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
    };
}

async function pythonApi(): Promise<PythonEnvironmentsApi | undefined> {
    const ext = vscode.extensions.getExtension<PythonEnvironmentsApi>(PYTHON_EXTENSION);
    if (!ext) {
        return undefined;
    }
    try {
        return ext.isActive ? ext.exports : await ext.activate();
    } catch (error) {
        traceWarn(`the Python extension did not activate: ${String(error)}`);
        return undefined;
    }
}

/** The Python extension's interpreter for `resource`, or undefined. */
export async function pythonExtensionInterpreter(resource?: vscode.Uri): Promise<string[] | undefined> {
    const api = await pythonApi();
    try {
        const active = api?.environments?.getActiveEnvironmentPath(resource);
        if (active) {
            const resolved = await api!.environments!.resolveEnvironment(active);
            const exe = resolved?.executable?.uri?.fsPath;
            if (exe) {
                return [exe];
            }
        }
        const legacy = api?.settings?.getExecutionDetails(resource)?.execCommand;
        return legacy && legacy.length > 0 ? legacy : undefined;
    } catch (error) {
        traceWarn(`could not ask the Python extension for its interpreter: ${String(error)}`);
        return undefined;
    }
}

/** Calls `listener` when the user picks another interpreter in the Python extension. */
export async function onPythonInterpreterChanged(listener: () => void): Promise<vscode.Disposable | undefined> {
    const api = await pythonApi();
    const event = api?.environments?.onDidChangeActiveEnvironmentPath;
    return event ? event(() => listener()) : undefined;
}
