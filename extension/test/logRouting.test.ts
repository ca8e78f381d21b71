import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { LevelledChannel, levelOf, LineBuffer } from '../logRouting';

test('the client\'s "[Level - time]" lines and the server\'s Python log lines keep their level', () => {
    assert.deepEqual(levelOf('[Error - 10:01:02 AM] diagnostics for x failed'), { level: 'error', text: 'diagnostics for x failed' });
    assert.deepEqual(levelOf('[Warn  - 10:01:02 AM] setting ignored: lint.run'), { level: 'warn', text: 'setting ignored: lint.run' });
    assert.deepEqual(levelOf('[Info  - 10:01:02 AM] ready'), { level: 'info', text: 'ready' });
    assert.deepEqual(levelOf('2026-12-01 11:02:03,456 WARNING pygls.protocol: slow'), { level: 'warn', text: 'pygls.protocol: slow' });
    assert.deepEqual(levelOf('Traceback (most recent call last):', 'warn'), { level: 'warn', text: 'Traceback (most recent call last):' });
});

test('a server that exits with code 0 (a restart or a stop) is no error; another code is', () => {
    assert.deepEqual(levelOf('[Error - 10:01:02 AM] Server process exited with code 0.'),
        { level: 'info', text: 'Server process exited with code 0.' });
    assert.deepEqual(levelOf('[Error - 10:01:02 AM] Server process exited with code 1.'),
        { level: 'error', text: 'Server process exited with code 1.' });
});

test('stderr chunks become whole lines, each written once at its level', () => {
    const buffer = new LineBuffer();
    assert.deepEqual(buffer.push('first li'), []);
    assert.deepEqual(buffer.push('ne\nsecond\n\nthi'), ['first line', 'second']);
    assert.deepEqual(buffer.push('rd\r\n'), ['third']);
    const written: string[] = [];
    const sink = Object.fromEntries(['trace', 'debug', 'info', 'warn', 'error'].map((level) =>
        [level, (text: string) => written.push(`${level}: ${text}`)]));
    const channel = new LevelledChannel({ name: 'Tritonify', ...sink } as never);
    channel.appendLine('[Error - 1:02:03 PM] boom');
    channel.append('2026-12-01 11:02:03,456 ERROR tritonify.server: x\nplain');
    channel.append(' text\n');
    assert.deepEqual(written, ['error: boom', 'error: tritonify.server: x', 'warn: plain text']);
});
