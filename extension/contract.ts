/**
 * The commands and code-action kinds both sides share, compiled in from the one file the server
 * reads too (contract/commands.json, through tritonify.contract): which server commands the
 * extension forwards, which of them run the workspace's code (refused in an untrusted workspace,
 * with the message each names), and the code-action kinds by name. Nothing here is restated by hand.
 */
import commands from '../contract/commands.json';

interface ServerCommandSpec {
    arguments: string[];
    answers: string;
    runsWorkspaceCode: boolean;
    untrustedMessage?: string;
}

const SERVER: Record<string, ServerCommandSpec> = commands.server;

/** Server commands (`workspace/executeCommand`) the extension forwards to the server. */
export const SERVER_COMMANDS: ReadonlySet<string> = new Set(Object.keys(SERVER));

/** Whether server command `name` runs the workspace's code (so needs a trusted workspace). */
export function runsWorkspaceCode(name: string): boolean {
    return SERVER[name]?.runsWorkspaceCode ?? true;
}

/** What an untrusted workspace is told when `name` would run its code. */
export function untrustedMessage(name: string): string {
    return SERVER[name]?.untrustedMessage ?? 'this runs the workspace\'s code';
}

/** Code-action kinds by name (`runKernel`, `insertTemplate`, `writeContract`, ...). */
export const CODE_ACTION_KINDS: Readonly<Record<keyof typeof commands.codeActionKinds, string>> = commands.codeActionKinds;
