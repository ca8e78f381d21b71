/**
 * The status bar item: the server's state and, while a Benchmark or Profile runs, its kernel and
 * elapsed time. `statusText` is pure (unit-tested); `ServerStatus` drives a StatusBarItem.
 */
import type { StatusBarItem } from 'vscode';

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed' | 'untrusted';

/** VS Code's own command (and its button label) that makes the workspace trusted. */
export const MANAGE_TRUST = 'Manage Workspace Trust';
export const MANAGE_TRUST_COMMAND = 'workbench.trust.manage';

/** What clicking the status item does: what the state needs next. */
export function statusCommand(state: ServerState): string {
    return state === 'stopped' ? 'tritonify.restart' : state === 'untrusted' ? MANAGE_TRUST_COMMAND : 'tritonify.showLogs';
}

export interface RunningJob {
    kind: 'benchmark' | 'profile';
    kernel: string;
    startedAt: number;   // ms since epoch
}

const ICON: Record<ServerState, string> = {
    starting: '$(loading~spin)',
    running: '$(check)',
    stopped: '$(circle-slash)',
    failed: '$(error)',
    untrusted: '$(shield)',
};

export function formatElapsed(ms: number): string {
    const s = Math.max(0, Math.floor(ms / 1000));
    const m = Math.floor(s / 60);
    return m > 0 ? `${m}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** `linting`: the files (names) whose lint has run longer than the server's busy threshold. */
export function statusText(state: ServerState, jobs: RunningJob[], now: number, linting: string[] = []): { text: string; tooltip: string } {
    if (jobs.length > 0) {
        const job = jobs[0];
        const more = jobs.length > 1 ? ` (+${jobs.length - 1})` : '';
        return {
            text: `$(sync~spin) Tritonify: ${job.kind} ${job.kernel} ${formatElapsed(now - job.startedAt)}${more}`,
            tooltip: jobs.map((j) => `${j.kind} of ${j.kernel}: running for ${formatElapsed(now - j.startedAt)}`).join('\n'),
        };
    }
    if (linting.length > 0 && state === 'running' || linting.length > 0 && state === 'untrusted') {
        return { text: '$(loading~spin) Tritonify', tooltip: `Tritonify: linting ${linting.join(', ')}` };
    }
    const tooltip = {
        starting: 'Tritonify: the language server is starting',
        running: 'Tritonify: the language server is running',
        stopped: 'Tritonify: the language server is stopped (click to restart)',
        failed: 'Tritonify: the language server could not start (click for the logs)',
        untrusted: 'Tritonify: linting only; Benchmark and Profile need a trusted workspace (click to manage workspace trust)',
    }[state];
    return { text: `${ICON[state]} Tritonify`, tooltip };
}

export class ServerStatus {
    private state: ServerState = 'starting';
    private jobs: RunningJob[] = [];
    private linting = new Map<string, string>();   // uri -> file name, while its lint is long
    private timer: ReturnType<typeof setInterval> | undefined;

    constructor(private readonly item: StatusBarItem) {
        this.render();
        item.show();
    }

    setState(state: ServerState): void {
        this.state = state;
        this.item.command = statusCommand(state);
        this.render();
    }

    jobStarted(job: RunningJob): void {
        this.jobs.push(job);
        this.timer ??= setInterval(() => this.render(), 1000);
        this.render();
    }

    jobEnded(job: RunningJob): void {
        this.jobs = this.jobs.filter((j) => j !== job);
        if (this.jobs.length === 0 && this.timer) {
            clearInterval(this.timer);
            this.timer = undefined;
        }
        this.render();
    }

    /** The server's `tritonify/lintBusy` notification. */
    lintBusy(uri: string, busy: boolean): void {
        if (busy) {
            this.linting.set(uri, uri.split('/').pop() || uri);
        } else {
            this.linting.delete(uri);
        }
        this.render();
    }

    private render(): void {
        const { text, tooltip } = statusText(this.state, this.jobs, Date.now(), [...this.linting.values()]);
        this.item.text = text;
        this.item.tooltip = tooltip;
    }

    dispose(): void {
        if (this.timer) {
            clearInterval(this.timer);
        }
        this.item.dispose();
    }
}
