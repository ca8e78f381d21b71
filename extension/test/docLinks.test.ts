import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPage, pagePath, renderedLink, renderedLinks, ruleRow } from '../docLinks';

test('a file link to a bundled page becomes the command that opens it rendered', () => {
    const href = 'file:///home/u/.vscode/extensions/tritonify/bundled/libs/tritonify/references/rules/TRI001.md';
    assert.equal(pagePath(href), '/home/u/.vscode/extensions/tritonify/bundled/libs/tritonify/references/rules/TRI001.md');
    const link = renderedLink(href);
    assert.match(link, /^command:tritonify\.openPage\?/);
    assert.deepEqual(JSON.parse(decodeURIComponent(link.split('?')[1])), [pagePath(href)]);
    assert.equal(pagePath('file:///a%20b/TRI002.md'), '/a b/TRI002.md');
});

test('other links stay as they are', () => {
    assert.equal(renderedLink('https://triton-lang.org/'), 'https://triton-lang.org/');
    assert.equal(renderedLink('file:///tmp/x.py'), 'file:///tmp/x.py');
    const md = '**TRI001**\n\n[TRI001 libdevice-tanh: the whole page](file:///r/rules/TRI001.md) and [web](https://x.org/a.md)';
    const out = renderedLinks(md);
    assert.match(out, /\]\(command:tritonify\.openPage\?/);
    assert.match(out, /\[web\]\(https:\/\/x\.org\/a\.md\)/);
    assert.ok(isPage('/r/TRI001.md') && !isPage('/etc/passwd') && !isPage(3));
});

test('the rule-docs picker lists each code with its name and what it detects', () => {
    const page = '# TRI001 libdevice-tanh\n\n**Default severity:** warning\n\n## What it detects\n\n`libdevice.tanh` in a hot loop.\n';
    assert.deepEqual(ruleRow('TRI001', page), { label: 'TRI001', description: 'libdevice-tanh', detail: '`libdevice.tanh` in a hot loop.' });
    assert.deepEqual(ruleRow('TRI002', 'no heading here'), { label: 'TRI002' });
});
