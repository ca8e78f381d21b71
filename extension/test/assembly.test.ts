import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { ASSEMBLY_SCHEME, assemblyPath, FALLBACK_LANGUAGE, readAssembly } from '../assembly';

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

test('listings open read-only under their own scheme, in their language mode, without scratch paths', () => {
    const sass = readAssembly({ title: 'k [BLOCK=64] SASS sm_90', language: 'plaintext', kind: 'sass',
        content: '\t//## File "/tmp/tritonify-inspect-ab12/src/kernel.py", line 7\n        /*0010*/ EXIT ;\n' });
    assert.ok('document' in sass);
    assert.equal(sass.document.language, 'tritonify-sass');
    assert.equal(sass.document.content, '\t//## File "kernel.py", line 7\n        /*0010*/ EXIT ;\n');
    assert.doesNotMatch(sass.document.content, /tmp|tritonify-inspect/);
    assert.equal(assemblyPath('k [BLOCK=64] SASS sm_90', 'sass'), '/k_[BLOCK=64]_SASS_sm_90.sass');
    assert.equal(ASSEMBLY_SCHEME, 'tritonify-asm');
});
