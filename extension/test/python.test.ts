import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { findOnPath, interpreterFix, resolveInterpreter } from '../python';

const onDisk = (files: string[]) => (f: string) => files.includes(f);

test('the setting wins over the Python extension and PATH', () => {
    const choice = resolveInterpreter({ setting: ['/opt/py/bin/python', '-X', 'dev'], pythonExtension: ['/ext/python'],
        pathDirs: ['/usr/bin'], isExecutable: onDisk(['/usr/bin/python3']), platform: 'linux' });
    assert.deepEqual(choice, { command: ['/opt/py/bin/python', '-X', 'dev'], source: 'setting' });
});

test('without a setting, the Python extension\'s interpreter is used', () => {
    const choice = resolveInterpreter({ setting: [], pythonExtension: ['/ext/venv/bin/python'], pathDirs: ['/usr/bin'],
        isExecutable: onDisk(['/usr/bin/python3']), platform: 'linux' });
    assert.deepEqual(choice, { command: ['/ext/venv/bin/python'], source: 'python-extension' });
});

test('blank entries count as unset', () => {
    const choice = resolveInterpreter({ setting: ['  '], pythonExtension: [''], pathDirs: ['/usr/bin'],
        isExecutable: onDisk(['/usr/bin/python3']), platform: 'linux' });
    assert.deepEqual(choice, { command: [path.join('/usr/bin', 'python3')], source: 'path' });
});

test('on PATH, python3 is preferred to python, in PATH order', () => {
    const files = ['/a/python', '/b/python3'];
    assert.equal(findOnPath(['python3', 'python'], ['/a', '/b'], onDisk(files), 'linux'), path.join('/b', 'python3'));
    assert.equal(findOnPath(['python3', 'python'], ['/a'], onDisk(files), 'linux'), path.join('/a', 'python'));
});

test('no interpreter anywhere gives undefined and a fix that names the setting', () => {
    const choice = resolveInterpreter({ setting: [], pathDirs: ['/nowhere'], isExecutable: () => false, platform: 'linux' });
    assert.equal(choice, undefined);
    assert.match(interpreterFix(undefined), /tritonify\.interpreter/);
    assert.match(interpreterFix({ command: ['/usr/bin/python3'], source: 'path' }), /\/usr\/bin\/python3.*PATH/);
});
