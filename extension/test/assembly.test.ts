import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { FALLBACK_LANGUAGE, readAssembly } from '../assembly';

test('a listing from the server becomes the document to open', () => {
    const read = readAssembly({ title: 'k [BLOCK=64] SASS sm_90', language: 'ptx', content: '.version 9.4\n', kind: 'ptx' });
    assert.deepEqual(read, { document: { title: 'k [BLOCK=64] SASS sm_90', language: 'ptx', content: '.version 9.4\n' } });
});

test('the server\'s reason is shown instead of an empty tab', () => {
    assert.deepEqual(readAssembly({ error: 'no compiled k in file:///a.py' }), { error: 'no compiled k in file:///a.py' });
    assert.ok('error' in readAssembly(undefined));
    assert.ok('error' in readAssembly(null));
    assert.ok('error' in readAssembly([1, 2]));
    assert.ok('error' in readAssembly({ title: 't', language: 'ptx', content: '' }));
});

test('a missing or odd language id falls back to plain text', () => {
    const missing = readAssembly({ content: 'EXIT ;' });
    assert.ok('document' in missing);
    assert.equal(missing.document.language, FALLBACK_LANGUAGE);
    assert.equal(missing.document.title, 'Tritonify listing');
    const odd = readAssembly({ content: 'EXIT ;', language: '../../etc' });
    assert.ok('document' in odd && odd.document.language === FALLBACK_LANGUAGE);
});
