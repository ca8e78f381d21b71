/**
 * The server's command line and environment: `<interpreter> -m tritonify server` over stdio.
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
    env: Record<string, string>;
}

export interface CommandInputs {
    interpreter: string[];
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
        env.TRITONIFY_NCU = inputs.ncuPath;   // read by diagnostics/ncu/ncu_tool.find_ncu
    }
    env.PYTHONUNBUFFERED = '1';
    env.PYTHONIOENCODING = 'utf-8';
    const args = [...leading, '-m', 'tritonify', 'server'];
    if (inputs.logLevel) {
        args.push('--log-level', inputs.logLevel);
    }
    return { command, args, env };
}
