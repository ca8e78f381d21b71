/**
 * The server's command line and environment: `<interpreter> <extension>/bundled/tool/tritonify_server.py
 * server` over stdio, started in that script's folder.
 *
 * Never `-m tritonify` and never the workspace as the working directory: `-m` puts the working
 * directory first on sys.path, and a workspace's `pickle.py`, `pygls.py` or `tritonify/` would be
 * imported in place of the real ones and run before any file is opened, in Restricted Mode too
 * (issue 31). A script puts its own folder there instead, which holds nothing else, with any
 * Python 3.10+. The preflight runs the same script with `--check`.
 *
 * With the bundled libraries (the default import strategy) `bundled/libs` of the extension goes
 * first on PYTHONPATH, so a machine with only Python lints out of the box; Benchmark and Profile
 * children inherit it and run the same Tritonify with the user's torch and triton.
 * Always an argument list, never a shell string.
 */
import * as path from 'path';
import type { ImportStrategy } from './settings';

export interface ServerCommand {
    command: string;
    args: string[];
    /** The preflight's arguments: the same interpreter and script, `--check`. */
    checkArgs: string[];
    /** The entry script's folder: never a workspace folder. */
    cwd: string;
    env: Record<string, string>;
}

/** The entry script, relative to the extension's root (the .vsix ships `bundled/**`). */
export const ENTRY_SCRIPT = ['bundled', 'tool', 'tritonify_server.py'];

export function entryScript(extensionPath: string): string {
    return path.join(extensionPath, ...ENTRY_SCRIPT);
}

export interface CommandInputs {
    interpreter: string[];
    entryScript: string;               // entryScript(extensionPath)
    importStrategy: ImportStrategy;
    bundledLibs: string | undefined;   // undefined when the extension carries none (a dev checkout)
    ncuPath: string;
    logLevel?: string;
    baseEnv?: Record<string, string | undefined>;
}

export function serverCommand(inputs: CommandInputs): ServerCommand {
    const [command, ...leading] = inputs.interpreter;
    if (!command) {
        throw new Error('no interpreter to start the server with');
    }
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(inputs.baseEnv ?? process.env)) {
        if (value !== undefined) {
            env[key] = value;
        }
    }
    if (inputs.importStrategy === 'useBundled' && inputs.bundledLibs) {
        const current = env.PYTHONPATH;
        env.PYTHONPATH = current ? `${inputs.bundledLibs}${path.delimiter}${current}` : inputs.bundledLibs;
    }
    if (inputs.ncuPath) {
        env.TRITONIFY_NCU = inputs.ncuPath;   // read by tools/ncu/ncu_tool.find_ncu
    }
    env.PYTHONUNBUFFERED = '1';
    env.PYTHONIOENCODING = 'utf-8';
    const args = [...leading, inputs.entryScript, 'server'];
    if (inputs.logLevel) {
        args.push('--log-level', inputs.logLevel);
    }
    return { command, args, checkArgs: [...leading, inputs.entryScript, '--check'], cwd: path.dirname(inputs.entryScript), env };
}
