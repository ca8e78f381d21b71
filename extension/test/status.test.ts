import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatElapsed, MANAGE_TRUST_COMMAND, statusCommand, statusText } from '../status';

test('elapsed time reads as seconds, then minutes and seconds', () => {
    assert.equal(formatElapsed(0), '0s');
    assert.equal(formatElapsed(59_999), '59s');
    assert.equal(formatElapsed(61_000), '1m 01s');
    assert.equal(formatElapsed(-5), '0s');
});

test('a running job shows its kind, kernel and elapsed time', () => {
    const now = 1_000_000;
    const s = statusText('running', [{ kind: 'benchmark', kernel: 'rmsnorm_kernel', startedAt: now - 75_000 }], now);
    assert.match(s.text, /benchmark rmsnorm_kernel 1m 15s/);
    const two = statusText('running', [{ kind: 'benchmark', kernel: 'a', startedAt: now }, { kind: 'profile', kernel: 'b', startedAt: now }], now);
    assert.match(two.text, /\(\+1\)/);
    assert.match(two.tooltip, /profile of b/);
});

test('without jobs the item shows the server state', () => {
    assert.match(statusText('failed', [], 0).tooltip, /could not start/);
    assert.match(statusText('untrusted', [], 0).tooltip, /trusted workspace/);
    assert.doesNotMatch(statusText('running', [], 0).text, /benchmark/);
});

test('a long lint shows a busy item naming the file, and the item goes back when it ends', () => {
    const busy = statusText('running', [], 0, ['parallel.py']);
    assert.match(busy.text, /loading~spin/);
    assert.match(busy.tooltip, /linting parallel\.py/);
    assert.doesNotMatch(statusText('running', [], 0, []).text, /loading/);
});

test('clicking the item does what its state needs: restart, manage workspace trust, else the log', () => {
    assert.equal(statusCommand('stopped'), 'tritonify.restart');
    assert.equal(statusCommand('untrusted'), MANAGE_TRUST_COMMAND);
    assert.equal(MANAGE_TRUST_COMMAND, 'workbench.trust.manage');
    assert.equal(statusCommand('failed'), 'tritonify.showLogs');
    assert.equal(statusCommand('running'), 'tritonify.showLogs');
    assert.match(statusText('untrusted', [], 0).tooltip, /click to manage workspace trust/);
});
