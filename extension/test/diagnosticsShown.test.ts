import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { DiagnosticLike, DiagnosticsShown } from '../diagnosticsShown';

const uri = (s: string) => ({ toString: () => s });

function finding(line: number, message = 'tl.device_print in a kernel', extra: Partial<DiagnosticLike> = {}): DiagnosticLike {
    return {
        range: { start: { line, character: 8 }, end: { line, character: 40 } },
        message,
        severity: 1,
        source: 'tritonify',
        code: { value: 'TRI022', target: uri('command:tritonify.openPage?x') },
        data: { code: 'TRI022', fixes: [] },
        ...extra,
    };
}

test('the same diagnostics again (another version of the same findings) change nothing', () => {
    const shown = new DiagnosticsShown();
    assert.equal(shown.changes('file:///a.py', [finding(10), finding(20)]), true);
    assert.equal(shown.changes('file:///a.py', [finding(10), finding(20)]), false);
    // another document is its own
    assert.equal(shown.changes('file:///b.py', [finding(10), finding(20)]), true);
});

test('any difference VS Code shows or a code action uses goes through', () => {
    const base = () => [finding(10)];
    const variants: DiagnosticLike[][] = [
        [finding(11)],                                                     // moved a line
        [finding(10, 'another message')],
        [finding(10, undefined, { severity: 0 })],
        [finding(10, undefined, { code: { value: 'TRI022', target: uri('file:///page.md') } })],
        [finding(10, undefined, { data: { code: 'TRI022', fixes: [{ title: 'remove it' }] } })],
        [finding(10, undefined, { tags: [1] })],
        [finding(10, undefined, { relatedInformation: [{ location: { uri: uri('file:///c.py'), range: finding(3).range }, message: 'here' }] })],
        [finding(10), finding(10)],                                        // one more
        [],                                                                // all gone
    ];
    for (const variant of variants) {
        const shown = new DiagnosticsShown();
        shown.changes('file:///a.py', base());
        assert.equal(shown.changes('file:///a.py', variant), true, JSON.stringify(variant));
        assert.equal(shown.changes('file:///a.py', base()), true);   // and back again
    }
});

test('after clear() (the server restarted) the next publication goes through', () => {
    const shown = new DiagnosticsShown();
    shown.changes('file:///a.py', [finding(10)]);
    shown.clear();
    assert.equal(shown.changes('file:///a.py', [finding(10)]), true);
});

test('no diagnostics after no diagnostics change nothing; the first empty publication goes through', () => {
    const shown = new DiagnosticsShown();
    assert.equal(shown.changes('file:///a.py', []), true);
    assert.equal(shown.changes('file:///a.py', []), false);
});
