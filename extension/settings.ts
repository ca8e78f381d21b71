/**
 * Tritonify's VS Code settings and their translation into what the language server reads.
 *
 * Pure (no `vscode` import) so the translation is unit-tested without an editor. The server's
 * shape is documented in `server/settings.py`:
 *   {lint: {run, select, ignore, severity, timeoutSeconds}, interpreter, trusted, jobs: {timeoutSeconds},
 *    benchmark: {baselines, shapes, timeout}, inspect: {enabled, target}}
 * VS Code stores `tritonify.lint.run` etc. as nested objects under the `tritonify` section, which
 * is that shape already; what the client adds is the resolved interpreter and the workspace trust,
 * and it never lets a workspace's settings file claim trust the editor did not give.
 */

export type LintRun = 'onType' | 'onSave';
export type ImportStrategy = 'useBundled' | 'fromEnvironment';
/** The GPU compile-time insight compiles for: `auto` is the local GPU (NVML), else sm_90. */
export const INSPECT_TARGETS = ['auto', 'sm_80', 'sm_90', 'sm_100', 'sm_120'] as const;
export type InspectTarget = typeof INSPECT_TARGETS[number];

/** The `tritonify.*` settings as the user wrote them (after VS Code's defaults). */
export interface ExtensionSettings {
    interpreter: string[];
    importStrategy: ImportStrategy;
    lint: {
        run: LintRun;
        select: string[];
        ignore: string[];
        severity: Record<string, string>;
        timeoutSeconds: number;
    };
    ncuPath: string;
    /** baselines/shapes/timeout become `tritonify bench --baselines/--shapes/--timeout` (the server checks them). */
    benchmark: { openResults: boolean; baselines: string; shapes: string; timeout: number };
    jobs: { timeoutSeconds: number };
    inspect: { enabled: boolean; target: InspectTarget };
}

/** What the server receives as `initializationOptions` and as `workspace/configuration` answers. */
export interface ServerSettings {
    lint: {
        run: LintRun;
        select: string[];
        ignore: string[];
        severity: Record<string, string>;
        timeoutSeconds: number;
    };
    interpreter: string[];
    trusted: boolean;
    jobs: { timeoutSeconds: number };
    benchmark: { baselines: string; shapes: string; timeout: number };
    inspect: { enabled: boolean; target: InspectTarget };
}

export const DEFAULTS: ExtensionSettings = {
    interpreter: [],
    importStrategy: 'useBundled',
    lint: { run: 'onType', select: [], ignore: [], severity: {}, timeoutSeconds: 60 },
    ncuPath: '',
    benchmark: { openResults: true, baselines: '', shapes: '', timeout: 0 },
    jobs: { timeoutSeconds: 600 },
    inspect: { enabled: true, target: 'auto' },
};

const SEVERITIES = new Set(['error', 'warning', 'info', 'hint']);

function strings(value: unknown): string[] | undefined {
    if (typeof value === 'string') {
        return value.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
    }
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
        return value.map((s) => s.trim()).filter((s) => s.length > 0);
    }
    return undefined;
}

function positive(value: unknown, fallback: number): number {
    return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

function object(value: unknown): Record<string, unknown> {
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * The settings from a raw `tritonify` configuration object (what `getConfiguration('tritonify')`
 * holds), with wrong values replaced by the defaults so a typo never stops the server.
 * `problems` says what was replaced, for the log.
 */
export function readSettings(raw: unknown): { settings: ExtensionSettings; problems: string[] } {
    const r = object(raw);
    const lint = object(r.lint);
    const problems: string[] = [];
    const interpreter = typeof r.interpreter === 'string' ? (r.interpreter.trim() ? [r.interpreter.trim()] : []) : strings(r.interpreter);
    if (r.interpreter !== undefined && interpreter === undefined) {
        problems.push('tritonify.interpreter must be a list of strings (the Python and its arguments)');
    }
    const run = lint.run === 'onSave' || lint.run === 'onType' ? lint.run : DEFAULTS.lint.run;
    if (lint.run !== undefined && lint.run !== run) {
        problems.push(`tritonify.lint.run must be "onType" or "onSave", not ${JSON.stringify(lint.run)}`);
    }
    const severity: Record<string, string> = {};
    for (const [code, level] of Object.entries(object(lint.severity))) {
        if (typeof level === 'string' && SEVERITIES.has(level.toLowerCase())) {
            severity[code.trim().toUpperCase()] = level.toLowerCase();
        } else {
            problems.push(`tritonify.lint.severity.${code} must be error, warning, info or hint`);
        }
    }
    const benchmark = object(r.benchmark);
    for (const key of ['baselines', 'shapes'] as const) {
        if (benchmark[key] !== undefined && typeof benchmark[key] !== 'string') {
            problems.push(`tritonify.benchmark.${key} must be a string`);
        }
    }
    if (benchmark.timeout !== undefined && !(typeof benchmark.timeout === 'number' && Number.isFinite(benchmark.timeout) && benchmark.timeout >= 0)) {
        problems.push('tritonify.benchmark.timeout must be a number of seconds (0: bench\'s own default)');
    }
    const inspect = object(r.inspect);
    if (inspect.enabled !== undefined && typeof inspect.enabled !== 'boolean') {
        problems.push('tritonify.inspect.enabled must be true or false');
    }
    const target = INSPECT_TARGETS.find((t) => t === inspect.target) ?? DEFAULTS.inspect.target;
    if (inspect.target !== undefined && inspect.target !== target) {
        problems.push(`tritonify.inspect.target must be one of ${INSPECT_TARGETS.join(', ')}, not ${JSON.stringify(inspect.target)}`);
    }
    return {
        settings: {
            interpreter: interpreter ?? [],
            importStrategy: r.importStrategy === 'fromEnvironment' ? 'fromEnvironment' : 'useBundled',
            lint: {
                run,
                select: (strings(lint.select) ?? []).map((c) => c.toUpperCase()),
                ignore: (strings(lint.ignore) ?? []).map((c) => c.toUpperCase()),
                severity,
                timeoutSeconds: positive(lint.timeoutSeconds, DEFAULTS.lint.timeoutSeconds),
            },
            ncuPath: typeof r.ncuPath === 'string' ? r.ncuPath.trim() : '',
            benchmark: {
                openResults: typeof benchmark.openResults === 'boolean' ? benchmark.openResults : true,
                baselines: typeof benchmark.baselines === 'string' ? benchmark.baselines.trim() : DEFAULTS.benchmark.baselines,
                shapes: typeof benchmark.shapes === 'string' ? benchmark.shapes.trim() : DEFAULTS.benchmark.shapes,
                timeout: typeof benchmark.timeout === 'number' && Number.isFinite(benchmark.timeout) && benchmark.timeout >= 0
                    ? benchmark.timeout : DEFAULTS.benchmark.timeout,
            },
            jobs: { timeoutSeconds: positive(object(r.jobs).timeoutSeconds, DEFAULTS.jobs.timeoutSeconds) },
            inspect: {
                enabled: typeof inspect.enabled === 'boolean' ? inspect.enabled : DEFAULTS.inspect.enabled,
                target,
            },
        },
        problems,
    };
}

/**
 * The server's settings: the user's lint, benchmark and compile-time insight settings, the interpreter the
 * client resolved (the one that runs Benchmark, Profile and the compiler) and the editor's
 * workspace trust (without it the server compiles nothing).
 */
export function toServerSettings(settings: ExtensionSettings, interpreter: string[], trusted: boolean): ServerSettings {
    return {
        lint: {
            run: settings.lint.run,
            select: [...settings.lint.select],
            ignore: [...settings.lint.ignore],
            severity: { ...settings.lint.severity },
            timeoutSeconds: settings.lint.timeoutSeconds,
        },
        interpreter: [...interpreter],
        trusted,
        jobs: { timeoutSeconds: settings.jobs.timeoutSeconds },
        benchmark: { baselines: settings.benchmark.baselines, shapes: settings.benchmark.shapes, timeout: settings.benchmark.timeout },
        inspect: { enabled: settings.inspect.enabled, target: settings.inspect.target },
    };
}

/**
 * A `workspace/configuration` answer for the `tritonify` section, made safe: whatever a
 * workspace's settings file says, `trusted` is the editor's trust and `interpreter` is the one the
 * client resolved (so an untrusted folder cannot point the server at its own executable).
 */
export function configurationAnswer(raw: unknown, interpreter: string[], trusted: boolean): ServerSettings {
    return toServerSettings(readSettings(raw).settings, interpreter, trusted);
}

/** Settings whose change needs a new server process (not just a configuration refresh). */
export const RESTART_KEYS = ['tritonify.interpreter', 'tritonify.importStrategy', 'tritonify.ncuPath'];
