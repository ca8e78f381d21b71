/**
 * Which Python runs the server, Benchmark and Profile.
 *
 * Order (the template's): the `tritonify.interpreter` setting when set, else the interpreter the
 * Python extension has selected for the workspace, else `python3` (then `python`) on PATH.
 * Pure apart from the PATH lookup, whose file test is injectable for the unit tests.
 */
import * as fs from 'fs';
import * as path from 'path';

export interface InterpreterChoice {
    /** The command and its leading arguments, e.g. ["/venv/bin/python"] or ["py", "-3"]. */
    command: string[];
    /** Where it came from, for the log and for the "cannot start" notification. */
    source: 'setting' | 'python-extension' | 'path';
}

export interface InterpreterSources {
    setting: string[];
    /** The Python extension's active environment, when the extension is installed and has one. */
    pythonExtension?: string[];
    /** PATH, split; defaults to process.env.PATH. */
    pathDirs?: string[];
    isExecutable?: (file: string) => boolean;
    platform?: NodeJS.Platform;
}

function defaultIsExecutable(file: string): boolean {
    try {
        fs.accessSync(file, fs.constants.X_OK);
        return fs.statSync(file).isFile();
    } catch {
        return false;
    }
}

/** The first of `names` found on PATH, as an absolute path. */
export function findOnPath(names: string[], dirs: string[], isExecutable = defaultIsExecutable, platform = process.platform): string | undefined {
    const suffixes = platform === 'win32' ? ['.exe', ''] : [''];
    for (const name of names) {
        for (const dir of dirs) {
            if (!dir) {
                continue;
            }
            for (const suffix of suffixes) {
                const candidate = path.join(dir, name + suffix);
                if (isExecutable(candidate)) {
                    return candidate;
                }
            }
        }
    }
    return undefined;
}

/** The interpreter to use, or undefined when there is none anywhere. */
export function resolveInterpreter(sources: InterpreterSources): InterpreterChoice | undefined {
    const setting = sources.setting.filter((a) => a.trim().length > 0);
    if (setting.length > 0) {
        return { command: setting, source: 'setting' };
    }
    const fromExtension = (sources.pythonExtension ?? []).filter((a) => a.trim().length > 0);
    if (fromExtension.length > 0) {
        return { command: fromExtension, source: 'python-extension' };
    }
    const platform = sources.platform ?? process.platform;
    const dirs = sources.pathDirs ?? (process.env.PATH ?? '').split(path.delimiter);
    const names = platform === 'win32' ? ['python', 'python3'] : ['python3', 'python'];
    const found = findOnPath(names, dirs, sources.isExecutable ?? defaultIsExecutable, platform);
    return found ? { command: [found], source: 'path' } : undefined;
}

/** What the user should do when no interpreter was found or it could not start the server. */
export function interpreterFix(choice: InterpreterChoice | undefined): string {
    if (choice === undefined) {
        return 'Install Python 3.10 or newer, or set "tritonify.interpreter" to the Python to use.';
    }
    if (choice.source === 'setting') {
        return `Check "tritonify.interpreter" (${choice.command.join(' ')}): it must be Python 3.10 or newer.`;
    }
    return `Tritonify used ${choice.command.join(' ')} (from ${choice.source === 'path' ? 'PATH' : 'the Python extension'}); ` +
        'set "tritonify.interpreter" to a Python 3.10 or newer.';
}
