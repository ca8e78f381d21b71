import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { BUSY_AFTER_MS, CLIENT_STATES_TRUST, LINT_BUSY_NOTIFICATION } from '../protocol';

test('the busy notification is the one the server sends (contract/protocol.json)', () => {
    const file = path.join(__dirname, '..', '..', '..', 'contract', 'protocol.json');
    const shared = JSON.parse(fs.readFileSync(file, 'utf-8'));
    assert.equal(LINT_BUSY_NOTIFICATION, shared.lintBusyNotification);
    assert.equal(LINT_BUSY_NOTIFICATION, 'tritonify/lintBusy');
    assert.equal(BUSY_AFTER_MS, 300);
    const server = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'server', 'diagnostics_feature.py'), 'utf-8');
    assert.match(server, /_PROTOCOL\["lintBusyNotification"\]/);
});

test('the client says its trust is the workspace trust by the key the server reads (contract/protocol.json)', () => {
    const file = path.join(__dirname, '..', '..', '..', 'contract', 'protocol.json');
    const shared = JSON.parse(fs.readFileSync(file, 'utf-8'));
    assert.equal(CLIENT_STATES_TRUST, shared.clientStatesTrust);
    const client = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'extension', 'server.ts'), 'utf-8');
    assert.match(client, /\[CLIENT_STATES_TRUST\]: true/);
    const server = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'server', 'app.py'), 'utf-8');
    assert.match(server, /PROTOCOL\["clientStatesTrust"\]/);
});
