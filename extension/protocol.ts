/**
 * Names shared with the language server, read from the one file both sides use
 * (contract/protocol.json, also read by the server through tritonify.contract).
 */
import protocol from '../contract/protocol.json';

/** Server -> client: `{ uri, busy }`, busy while a lint of `uri` has run longer than `busyAfterMs`. */
export const LINT_BUSY_NOTIFICATION: string = protocol.lintBusyNotification;
export const BUSY_AFTER_MS: number = protocol.busyAfterMs;

export interface LintBusyParams {
    uri: string;
    busy: boolean;
}

/** What a failed job offers next: action id -> button label. */
export const JOB_ACTIONS: Record<string, string> = protocol.jobActions;
/** initializationOptions.client[CLIENT_SHOWS_JOB_OUTCOMES] = true: this client shows outcomes, with their buttons. */
export const CLIENT_SHOWS_JOB_OUTCOMES: string = protocol.clientShowsJobOutcomes;
/** initializationOptions.client[CLIENT_STATES_TRUST] = true: the `trusted` this client sends is VS Code's workspace trust. */
export const CLIENT_STATES_TRUST: string = protocol.clientStatesTrust;
